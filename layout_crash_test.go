package hikoutei

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// layoutChildEnv makes this test binary migrate the sheet's layout and be
// killed by the failpoint HIKOUTEI_FAILPOINTS arms (TestMain).
const layoutChildEnv = "HIKOUTEI_TEST_LAYOUT_CHILD"

// Part is the entity of the layout crash test, first declared as PartV1,
// then as Part: name renamed title, a new system field and a new field
// people edit.
type PartV1 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
}

// Part is PartV1's next shape.
type Part struct {
	ID    string  `hikoutei:"id,pk"`
	Title string  `hikoutei:"title,was=name"`
	Pop   float64 `hikoutei:"pop"`
	Notes string  `hikoutei:"notes,user"`
	Tag   string  `hikoutei:"tag,user"`
}

const partsSheet = "layout-crash-sheet"

// layoutChild is what the child is told: the store and the emulator.
type layoutChild struct {
	Dir, Endpoint string
	Round         int
}

// openParts opens dir syncing def to the emulator at endpoint with the
// workers stopped (Manual), on a clock round hours after t0, so a run
// takes a dead run's lease at once; it returns the store's dispatcher
// and poller (the spreadsheet provisioned).
func openParts(ctx context.Context, c layoutChild, def EntityDef) (*Store, *effects.Dispatcher, *effects.Poller, error) {
	prov, err := gsheets.New(ctx, gsheets.Config{Endpoint: c.Endpoint, Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1}})
	if err != nil {
		return nil, nil, nil, err
	}
	clock := events.NewManualClock(t0.Add(time.Duration(c.Round) * time.Hour))
	s, err := Open(ctx, c.Dir, Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true,
		Sync: &SyncOptions{SpreadsheetID: partsSheet, Provider: prov, Manual: true, PollingInterval: time.Minute, FullScanInterval: time.Minute}},
		def)
	if err != nil {
		return nil, nil, nil, err
	}
	e := engine.Of(s)
	d, err := e.Provision(ctx)
	if err != nil {
		return nil, nil, nil, errors.Join(err, s.Close())
	}
	_, p, _ := e.Workers()
	return s, d, p, nil
}

// runLayoutChild opens the store with Part's new shape and dispatches:
// the first tab's migration is killed by the failpoint.
func runLayoutChild(cfg string) error {
	var c layoutChild
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		return err
	}
	ctx := context.Background()
	s, d, _, err := openParts(ctx, c, Entity[Part]("Part"))
	if err != nil {
		return err
	}
	defer s.Close()
	for range 10 {
		if _, err := d.Pass(ctx); err != nil {
			return err
		}
	}
	return errors.New("the layout migration ran without reaching the failpoint")
}

// drainParts runs dispatch passes until nothing is unsettled.
func drainParts(t *testing.T, s *Store, d *effects.Dispatcher) {
	t.Helper()
	for range 50 {
		_, err := d.Pass(context.Background())
		mustT(t, err)
		c, err := engine.Of(s).OutboxCounts()
		mustT(t, err)
		n := int64(0)
		for _, st := range aggregates.Unsettled() {
			n += c[st]
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the outbox did not drain")
}

// TestI35_LayoutMigrationResumesAfterACrashBeforeItIsRecorded kills the
// process (SIGKILL, failpoint layout.after_sheet_migrate) after the first
// tab's migration batchUpdate landed and before the store recorded it; a
// person then edits that tab. The restart finds the tab in the current
// layout, records its migration, migrates the other tab, and every tab
// ends in the current layout with each column once, each row once, and
// every person's cell kept (imported as an edit).
func TestI35_LayoutMigrationResumesAfterACrashBeforeItIsRecorded(t *testing.T) {
	if !failpoint.Compiled {
		t.Skip("needs -tags failpoints")
	}
	ctx := context.Background()
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	c := layoutChild{Dir: t.TempDir(), Endpoint: srv.URL}
	s, d, _, err := openParts(ctx, c, Entity[PartV1]("Part"))
	mustT(t, err)
	u := s.Begin()
	mustT(t, u.Persist(&PartV1{ID: "a", Name: "A"}))
	mustT(t, u.Persist(&PartV1{ID: "b", Name: "B"}))
	_, err = u.Commit(ctx)
	mustT(t, err)
	drainParts(t, s, d)
	mustT(t, s.Close())
	person := emu.Person(partsSheet)
	mustT(t, person.Type("Part_Input", "B2", "typed before")) // a's notes, polled under the old layout by the child

	cfg, _ := json.Marshal(c)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), layoutChildEnv+"="+string(cfg), failpoint.EnvVar+"="+failpoint.LayoutAfterSheetMigrate+"=crash")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "failpoint: layout.after_sheet_migrate crash") {
		t.Fatalf("the child was not killed at the failpoint: %v\n%s", err, out)
	}
	migrated := layoutMigrations(t, c.Dir)
	if len(migrated) != 0 {
		t.Fatalf("the crash left recorded migrations: %v", migrated)
	}
	want := map[string][]string{
		"Part_System": {"id", "title", "pop", "notes", "tag", anchorHeader},
		"Part_Input":  {"id", "notes", "tag", anchorHeader},
	}
	crashed := ""
	for tab, header := range want {
		if got := displayedRows(t, person, tab); slices.Equal(got[0], header) {
			crashed = tab
		}
	}
	if crashed == "" {
		t.Fatal("no tab shows the new layout: the failpoint fired before the batchUpdate")
	}
	t.Logf("the crash left %s in the new layout, unrecorded", crashed)
	mustT(t, person.Type("Part_Input", "B3", "typed after the crash")) // b's notes, in whichever layout the tab shows

	c.Round = 1
	s, d, p, err := openParts(ctx, c, Entity[Part]("Part"))
	mustT(t, err)
	for range 5 {
		_, err := d.Pass(ctx)
		mustT(t, err)
	}
	_, err = p.Poll(ctx)
	mustT(t, err)
	drainParts(t, s, d)
	_, err = d.Reconcile(ctx)
	mustT(t, err)
	drainParts(t, s, d)

	for tab, header := range want {
		rows := displayedRows(t, person, tab)
		if !slices.Equal(rows[0], header) {
			t.Fatalf("%s header %q, want %q", tab, rows[0], header)
		}
		for _, id := range []string{"a", "b"} {
			if n := slices.IndexFunc(rows[1:], func(r []string) bool { return len(r) > 0 && r[len(r)-1] == id }); n < 0 ||
				slices.ContainsFunc(rows[n+2:], func(r []string) bool { return len(r) > 0 && r[len(r)-1] == id }) {
				t.Fatalf("%s does not show row %s exactly once: %q", tab, id, rows)
			}
		}
	}
	for id, note := range map[string]string{"a": "typed before", "b": "typed after the crash"} {
		got, err := Get[Part](ctx, s, id)
		if err != nil || got.Notes != note || got.Title != strings.ToUpper(id) {
			t.Fatalf("%s = %+v %v, want the person's notes %q", id, got, err, note)
		}
	}
	if cs, err := s.Conflicts(ctx, ConflictOpen); err != nil || len(cs) != 0 {
		t.Fatalf("open conflicts: %+v %v", cs, err)
	}
	if h := s.Health(); h.Sync != nil {
		t.Fatalf("sync health after the restart: %v", h.Sync)
	}
	mustT(t, s.Close())
	if got := layoutMigrations(t, c.Dir); got["Part_System"] != 1 || got["Part_Input"] != 1 {
		t.Fatalf("recorded migrations per tab: %v, want one each (the crashed tab %s)", got, crashed)
	}
}

const anchorHeader = "__hikoutei_row_id"

// displayedRows is what tab displays, trailing blank cells left out.
func displayedRows(t *testing.T, p *emulator.Person, tab string) [][]string {
	t.Helper()
	rows, err := p.Displayed(tab)
	mustT(t, err)
	if len(rows) == 0 {
		t.Fatalf("%s is empty", tab)
	}
	for i, r := range rows {
		for len(r) > 0 && r[len(r)-1] == "" {
			r = r[:len(r)-1]
		}
		rows[i] = r
	}
	return rows
}

// layoutMigrations counts the sheet.layout_migrated events per tab in
// dir's log (read-only).
func layoutMigrations(t *testing.T, dir string) map[string]int {
	t.Helper()
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	mustT(t, err)
	defer l.Close()
	out := map[string]int{}
	mustT(t, l.ReadFrom(1, func(e events.Event) error {
		if m, ok := e.Payload.(events.SheetLayoutMigrated); ok {
			out[m.Tab]++
		}
		return nil
	}))
	return out
}
