package observe_test

import (
	"encoding/json"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/observe"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// A store syncing through a pool of two service accounts, one of them
// revoked: the other carries every write (sync settles), sync health
// warns sheets_account_out naming the account by its index, and /healthz
// and /metrics show each account's budget by index, never its token.
func TestPoolAccountOutShowsInHealthAndMetrics(t *testing.T) {
	toks := []string{"sa-0-secret-token", "sa-1-secret-token"}
	sheet := hikouteitest.NewSheet(t, func(c *gsheets.Config) {
		c.HTTPClient = emulator.Caller(toks[0])
		c.Pool = []gsheets.Account{{HTTPClient: emulator.Caller(toks[1])}}
	})
	m := observe.New()
	s := open(t, m, sheet)
	h := hikouteitest.New(t, s)
	sheet.Emulator.Revoke(toks[1])
	for _, id := range []string{"LAX", "SFO", "JFK", "ORD"} {
		commit(t, s, airport{ID: id, Name: id})
		h.Drain(ctx)
	}
	sh := s.Health().SyncHealth
	if !sh.Settled() {
		t.Fatalf("sync health %+v with one account of two revoked, want settled", sh)
	}
	var warned bool
	for _, w := range sh.Warnings {
		warned = warned || w.Reason == hikoutei.ReasonSheetsAccountOut && strings.Contains(w.Detail, "account 1 of 2") &&
			strings.Contains(w.Detail, "credentials_rejected")
	}
	if !warned || sh.Failing() {
		t.Fatalf("warnings %+v (failing %v), want sheets_account_out for account 1, not failing", sh.Warnings, sh.Failing())
	}
	if q := sh.Quota; q == nil || len(q.Accounts) != 2 || q.Accounts[1].Out != "credentials_rejected" || q.Accounts[0].Out != "" {
		t.Fatalf("quota %+v, want account 1 out", q)
	}
	report, err := json.Marshal(observe.Report(s.Health()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), `"account":1,`) || !strings.Contains(string(report), `"out":"credentials_rejected"`) {
		t.Fatalf("/healthz report lacks the account out: %s", report)
	}
	fams := gather(t, m)
	if v := value(fams, "hikoutei_sheets_quota_account_out", "account=1", "reason=credentials_rejected"); v != 1 {
		t.Errorf("hikoutei_sheets_quota_account_out{account=1} = %v, want 1", v)
	}
	if v := value(fams, "hikoutei_sheets_quota_account_out", "account=0"); v != -1 {
		t.Errorf("account 0 is in the pool, yet hikoutei_sheets_quota_account_out{account=0} = %v", v)
	}
	if v := value(fams, "hikoutei_sheets_quota_account_rate", "account=0", "class=write"); v != 0 {
		t.Errorf("unpaced account 0's write rate %v, want 0", v)
	}
	for _, tok := range toks {
		if strings.Contains(string(report), tok) {
			t.Fatalf("the health report carries an account's token")
		}
	}
}
