package observe

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// health is a fixed HealthSource.
type health hikoutei.Health

func (h health) Health() hikoutei.Health { return hikoutei.Health(h) }

func TestHealthHandlerAnswers503OnlyWhenTheStoreCannotCommitOrSyncFails(t *testing.T) {
	tab := func(s hikoutei.TabHealth) *hikoutei.SyncHealth {
		return &hikoutei.SyncHealth{State: s.State, Reason: s.Reason, Tabs: []hikoutei.TabHealth{s}}
	}
	for name, c := range map[string]struct {
		h    hikoutei.Health
		want int
	}{
		"ok":                      {hikoutei.Health{SyncHealth: tab(hikoutei.TabHealth{Tab: "A_System", State: hikoutei.SyncOK})}, 200},
		"behind":                  {hikoutei.Health{SyncHealth: tab(hikoutei.TabHealth{Tab: "A_System", State: hikoutei.SyncBehind, Pending: 9})}, 200},
		"diverged within bound":   {hikoutei.Health{SyncHealth: tab(hikoutei.TabHealth{Tab: "A_System", State: hikoutei.SyncDiverged, Diverged: 2})}, 200},
		"diverged past the bound": {hikoutei.Health{SyncHealth: tab(hikoutei.TabHealth{Tab: "A_System", State: hikoutei.SyncDiverged, Diverged: 2, OverBound: true})}, 503},
		"blocked":                 {hikoutei.Health{SyncHealth: tab(hikoutei.TabHealth{Tab: "A_System", State: hikoutei.SyncBlocked, Reason: hikoutei.ReasonTabMissing})}, 503},
		"local failure":           {hikoutei.Health{Local: hikoutei.ErrLogWrite}, 503},
		"sync off":                {hikoutei.Health{}, 200},
	} {
		rec := httptest.NewRecorder()
		HealthHandler(health(c.h)).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		if rec.Code != c.want {
			t.Errorf("%s: %d, want %d (%s)", name, rec.Code, c.want, rec.Body)
		}
	}
}

// Credentials Google refused stop sync visibly: the report says
// credentials_rejected as the sync code and the blocked reason, and the
// handler answers 503.
func TestHealthReportsCredentialsRejectedWithItsCode(t *testing.T) {
	stopped := fmt.Errorf("sync stopped: %w", &sheetsio.Error{Code: sheetsio.CodeCredentialsRejected, Msg: "Google rejected the service-account credentials"})
	h := hikoutei.Health{Sync: stopped, SyncHealth: &hikoutei.SyncHealth{State: hikoutei.SyncBlocked, Reason: hikoutei.ReasonCredentials,
		Tabs: []hikoutei.TabHealth{{Tab: "A_System", State: hikoutei.SyncBlocked, Reason: hikoutei.ReasonCredentials}}}}
	rec := httptest.NewRecorder()
	HealthHandler(health(h)).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	var r HealthReport
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 503 || r.Status != "failing" || r.SyncCode != "credentials_rejected" || r.SyncHealth.Reason != "credentials_rejected" ||
		r.Local != "ok" || r.LocalCode != "" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// A standby serves reads while its primary commits: healthy (200), its
// local code says standby (R2: the code, never the fallback "error").
func TestR2_HealthOfAStandbyIsOKWithItsOwnLocalCode(t *testing.T) {
	r := Report(hikoutei.Health{Local: fmt.Errorf("%w: following the primary", hikoutei.ErrStandby)})
	if r.Status != "ok" || r.LocalCode != "replication_standby" {
		t.Fatalf("%+v", r)
	}
}

// Every kind the dispatcher counts (effects.Counters.Totals) is served by
// a series of one meaning: none is dropped, none shares a series with a
// kind of another meaning.
func TestEveryDispatcherKindHasItsOwnSeries(t *testing.T) {
	for kind := range (&effects.Counters{}).Totals() {
		if _, ok := dispatcherSeries[kind]; !ok {
			t.Errorf("the dispatcher counts %q but no series serves it", kind)
		}
	}
}

// F6: while the administrative channel cannot accept (too many open
// files), /healthz names it with its code and /metrics carries
// hikoutei_health_fault{part="admin"}; it alone does not fail health.
func TestF6_HealthAndMetricsNameAnAdminAcceptFailure(t *testing.T) {
	h := hikoutei.Health{Admin: fmt.Errorf("%w: since now: accept4: too many open files", errAcceptFailed)}
	r := Report(h)
	if r.Status != "ok" || r.AdminCode != "admin_accept_failed" || !strings.Contains(r.Admin, "too many open files") {
		t.Fatalf("%+v", r)
	}
	ch := make(chan prometheus.Metric, 8)
	collectFaults(ch, h)
	close(ch)
	var got []string
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		for _, l := range d.GetLabel() {
			got = append(got, l.GetName()+"="+l.GetValue())
		}
	}
	if strings.Join(got, ",") != "code=admin_accept_failed,part=admin" {
		t.Fatalf("series labels %v", got)
	}
}

var errAcceptFailed = errors.New("admin_accept_failed")

func TestHealthReportNamesAnInterruptedAdoptionWithoutFailing(t *testing.T) {
	h := hikoutei.Health{Adoption: fmt.Errorf("%w: tab Leads", hikoutei.ErrAdoptInterrupted)}
	r := Report(h)
	if r.AdoptionCode != "adopt_interrupted" || !strings.Contains(r.Adoption, "Leads") || r.Status != "ok" {
		t.Fatalf("report = code %q, %q, status %q; want adopt_interrupted naming the tab, status ok", r.AdoptionCode, r.Adoption, r.Status)
	}
	if r = Report(hikoutei.Health{}); r.Adoption != "" || r.AdoptionCode != "" {
		t.Fatalf("no adoption: report = %q %q, want absent", r.Adoption, r.AdoptionCode)
	}
}
