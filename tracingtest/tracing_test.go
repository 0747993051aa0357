package tracingtest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// traced is the entity of the tracing test.
type traced struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
}

// A commit, a dispatch and a poll each produce one span with the
// documented name and attributes (counts), and no span, the Google
// client's HTTP spans included, carries an entity id, a value or the
// spreadsheet id in its attributes.
func TestCommitDispatchAndPollProduceDocumentedSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Clock: events.NewManualClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)),
		HeartbeatInterval: -1, AcquireWait: -1, TracerProvider: tp, Sync: sheet.SyncOptions(), NATS: &hikoutei.NATSOptions{Disabled: true}},
		hikoutei.Entity[traced]("Traced"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := hikouteitest.New(t, s)
	ctx := context.Background()
	u := s.Begin()
	if err := u.Persist(&traced{ID: "SECRET-ID-7", Name: "Secret Value Field"}); err != nil {
		t.Fatal(err)
	}
	res, err := u.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Dispatch(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		hikoutei.SpanCommit:   {"hikoutei.entities=1", "hikoutei.events=" + strconv.Itoa(res.Events)},
		hikoutei.SpanDispatch: {"hikoutei.effects=2", "hikoutei.applied=2"}, // its System and Input rows,
		hikoutei.SpanPoll:     {"hikoutei.tabs=1", "hikoutei.certified=", "hikoutei.escalated="},
	}
	seen := map[string]bool{}
	for _, sp := range rec.Ended() {
		var attrs []string
		for _, a := range sp.Attributes() {
			kv := string(a.Key) + "=" + a.Value.String()
			attrs = append(attrs, kv)
			if strings.Contains(kv, "SECRET") || strings.Contains(kv, "Secret") || strings.Contains(kv, hikouteitest.SpreadsheetID) {
				t.Errorf("span %s carries an id or a value: %s", sp.Name(), kv)
			}
		}
		exp, ok := want[sp.Name()]
		if !ok || seen[sp.Name()] {
			continue
		}
		seen[sp.Name()] = true
		for _, kv := range exp {
			if !slices.ContainsFunc(attrs, func(a string) bool { return a == kv || strings.HasSuffix(kv, "=") && strings.HasPrefix(a, kv) }) {
				t.Errorf("span %s: attributes %v lack %s", sp.Name(), attrs, kv)
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no %s span", name)
		}
	}
}
