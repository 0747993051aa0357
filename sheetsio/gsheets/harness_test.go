package gsheets

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// testSheetID looks like a real id so a leak into logs is easy to grep.
const testSheetID = "1ZqSecretSpreadsheetIdForTests_x9"

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is a real sheets/v4 Provider against the emulator over HTTP.
type harness struct {
	t      *testing.T
	emu    *emulator.Emulator
	srv    *httptest.Server
	p      *Provider
	raw    *sheets.Service // the same client library, for assertions
	logs   *syncBuffer
	mu     sync.Mutex
	sleeps []time.Duration
}

var fixedNow = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func newHarness(t *testing.T, opts emulator.Options, tune ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, emu: emulator.New(opts), logs: &syncBuffer{}}
	h.srv = httptest.NewServer(h.emu.Handler())
	t.Cleanup(h.srv.Close)
	cfg := Config{
		Endpoint: h.srv.URL,
		Logger:   slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Pacing:   Pacing{ReadInterval: -1, WriteInterval: -1},
		Backoff:  Backoff{Initial: time.Millisecond, Max: 8 * time.Millisecond, Attempts: 6},
		Now:      func() time.Time { return fixedNow },
		Sleep:    h.recordSleep,
		Jitter:   func() float64 { return 0.5 },
	}
	for _, f := range tune {
		f(&cfg)
	}
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	h.raw, err = sheets.NewService(context.Background(), option.WithEndpoint(h.srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// recordSleep records backoff delays instead of waiting (injected clock).
func (h *harness) recordSleep(ctx context.Context, d time.Duration) error {
	h.mu.Lock()
	h.sleeps = append(h.sleeps, d)
	h.mu.Unlock()
	return ctx.Err()
}

func (h *harness) recordedSleeps() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.sleeps...)
}

func (h *harness) counters() emulator.Counters { return h.emu.Counters(testSheetID) }

func partEntity(name string) layout.Entity {
	return layout.Entity{Name: name, Fields: []layout.Field{
		{Name: "id", Kind: cell.String, Key: true},
		{Name: "name", Kind: cell.String, Editable: true},
		{Name: "qty", Kind: cell.Int, Editable: true},
		{Name: "price", Kind: cell.Float},
		{Name: "active", Kind: cell.Bool},
		{Name: "updated", Kind: cell.Time},
	}}
}

func testSchema(t *testing.T, names ...string) *layout.Schema {
	t.Helper()
	if len(names) == 0 {
		names = []string{"Part"}
	}
	var es []layout.Entity
	for _, n := range names {
		es = append(es, partEntity(n))
	}
	s, err := layout.NewSchema(es...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (h *harness) provision(s *layout.Schema) *sheetsio.Workbook {
	h.t.Helper()
	w, err := h.p.Provision(context.Background(), testSheetID, s)
	if err != nil {
		h.t.Fatalf("provision: %v", err)
	}
	return w
}

func (h *harness) dispatch(w *sheetsio.Workbook, b sheetsio.Batch) *sheetsio.DispatchResult {
	h.t.Helper()
	res, err := h.p.Dispatch(context.Background(), w, b)
	if err != nil {
		h.t.Fatalf("dispatch: %v", err)
	}
	return res
}

// values reads a tab as the poller would (UNFORMATTED_VALUE, SERIAL_NUMBER).
func (h *harness) values(title string) [][]any {
	h.t.Helper()
	vr, err := h.raw.Spreadsheets.Values.Get(testSheetID, a1.QuoteSheet(title)).
		ValueRenderOption("UNFORMATTED_VALUE").DateTimeRenderOption("SERIAL_NUMBER").Do()
	if err != nil {
		h.t.Fatalf("values.get: %v", err)
	}
	return vr.Values
}

// tabTitles lists the spreadsheet's tab titles.
func (h *harness) tabTitles() []string {
	h.t.Helper()
	ss, err := h.raw.Spreadsheets.Get(testSheetID).Do()
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, s := range ss.Sheets {
		out = append(out, s.Properties.Title)
	}
	return out
}

func (h *harness) wantStatus(res *sheetsio.DispatchResult, i int, want sheetsio.OpStatus) sheetsio.OpResult {
	h.t.Helper()
	if got := res.Ops[i]; got.Status != want {
		h.t.Fatalf("op %d: status %s (reason %q, err %v), want %s", i, got.Status, got.Reason, got.Err, want)
	}
	return res.Ops[i]
}

func partValues(name string, qty int64) map[string]any {
	return map[string]any{"id": name, "name": "Bolt " + name, "qty": qty, "price": 1.25, "active": true,
		"updated": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func appendOp(tab, anchor string, vals map[string]any) sheetsio.Op {
	return sheetsio.Op{ID: "eff-" + tab + "-" + anchor, Tab: tab, Kind: sheetsio.OpAppend, Anchor: anchor, Values: vals,
		Receipt: &sheetsio.Receipt{EffectID: "eff-" + tab + "-" + anchor, PayloadHash: "ph-" + anchor}}
}

// rowsWithAnchor counts the data rows of a tab whose last cell is anchor.
func rowsWithAnchor(rows [][]any, col int, anchor string) int {
	n := 0
	for _, r := range rows[1:] {
		if len(r) > col && r[col] == anchor {
			n++
		}
	}
	return n
}
