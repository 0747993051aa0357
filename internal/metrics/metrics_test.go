package metrics

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/effects"
)

// source is a fake Source reporting the dispatcher's counters.
type source struct{ dispatcher map[string]int64 }

func (s source) Stats(context.Context) (hikoutei.Stats, error) {
	return hikoutei.Stats{Dispatcher: s.dispatcher}, nil
}

func (s source) Health() hikoutei.Health { return hikoutei.Health{} }

// Every kind the dispatcher counts (effects.Counters.Totals, notes
// included) is served as a hikoutei_dispatcher_total series and named in
// the metric's help text.
func TestDispatcherHelpTextNamesEveryKindTheDispatcherCounts(t *testing.T) {
	kinds := (&effects.Counters{}).Totals()
	if _, ok := kinds["notes"]; !ok {
		t.Fatal("the dispatcher no longer counts notes")
	}
	rec := httptest.NewRecorder()
	Handler(source{kinds}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	var help string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "# HELP hikoutei_dispatcher_total ") {
			help = line
		}
	}
	for kind := range kinds {
		if !strings.Contains(string(body), `hikoutei_dispatcher_total{kind="`+kind+`"}`) {
			t.Errorf("no series for kind %s", kind)
		}
		if !strings.Contains(help, " "+kind+",") && !strings.Contains(help, "("+kind+",") && !strings.Contains(help, " "+kind+":") {
			t.Errorf("the help text does not name %s: %q", kind, help)
		}
	}
}
