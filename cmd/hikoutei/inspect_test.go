package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// ticket has a system-owned title (Ticket_System) and user-owned qty and
// note (Ticket_Input: id, qty, note, anchor).
type ticket struct {
	ID    string `hikoutei:"id,pk"`
	Title string `hikoutei:"title"`
	Qty   int64  `hikoutei:"qty,user"`
	Note  string `hikoutei:"note,user"`
}

// secret marks every cell value of the damaged store: it must never show
// in inspection output unless asked for with --values.
const secret = "PRIVATE-CELL"

// damaged is a store synced to an emulated sheet through the real client,
// with failed effects of two reasons (row_hash_mismatch, terminal;
// sheet_header_drift, retried) and active and cleared quarantine.
type damaged struct {
	dir string
	s   *hikoutei.Store
}

func openDamaged(t *testing.T) *damaged {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{HeartbeatInterval: -1, Sync: sheet.SyncOptions(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, hikoutei.Entity[ticket]("Ticket"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := hikouteitest.New(t, s)
	put := func(ts ...ticket) {
		t.Helper()
		u := s.Begin()
		for i := range ts {
			if err := u.Persist(&ts[i]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := u.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	dispatch := func() {
		t.Helper()
		if _, err := h.Dispatch(ctx); err != nil {
			t.Fatal(err)
		}
	}
	person := sheet.Person()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	put(ticket{ID: "a", Title: secret + "a"}, ticket{ID: "b", Title: secret + "b"}, ticket{ID: "c", Title: secret + "c"})
	h.Drain(ctx)
	must(person.Type("Ticket_System", "B3", "vandalised")) // b: a person typed over a System cell…
	put(ticket{ID: "b", Title: secret + "b2"})             // …so this update's guard fails: row_hash_mismatch
	dispatch()
	must(person.Type("Ticket_Input", "B2", secret+"qty")) // a: cell_type_mismatch
	must(person.Type("Ticket_Input", "C3", "=1+1"))       // b: a formula, later cleared
	if _, err := h.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	must(person.Type("Ticket_Input", "C3", ""))
	must(person.DeleteRows("Ticket_Input", 4, 1)) // c: row_deleted
	if _, err := h.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	must(person.Type("Ticket_System", "B1", "oops")) // sheet_header_drift
	put(ticket{ID: "c", Title: secret + "c2"})
	dispatch()
	return &damaged{dir: dir, s: s}
}

func (d *damaged) close(t *testing.T) {
	t.Helper()
	if err := d.s.Close(); err != nil {
		t.Fatal(err)
	}
}

// run runs the CLI and fails the test unless it exits with want.
func (d *damaged) run(t *testing.T, want int, args ...string) string {
	t.Helper()
	code, out := runCLI(t, append(args, "--dir", d.dir)...)
	if code != want {
		t.Fatalf("%v: exit %d, want %d:\n%s", args, code, want, out)
	}
	return out
}

// listJSON is a list command's --json output: the entries (one JSON
// line each) and how many matched in all (the "N of M shown" note on
// stderr when --limit cut the list, else the entries printed).
type listJSON[T any] struct {
	Total   int64
	Entries []T
}

// parseListJSON reads the JSON lines of a list command's combined output.
func parseListJSON[T any](t *testing.T, out string) listJSON[T] {
	t.Helper()
	l := listJSON[T]{Entries: []T{}}
	cut := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var shown int
		switch {
		case line == "":
		case strings.HasPrefix(line, "{"):
			var e T
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%v in %q", err, line)
			}
			l.Entries = append(l.Entries, e)
		default:
			if _, err := fmt.Sscanf(line, "%d of %d shown", &shown, &l.Total); err != nil {
				t.Fatalf("not a JSON line nor a count: %q", line)
			}
			cut = true
		}
	}
	if !cut {
		l.Total = int64(len(l.Entries))
	}
	return l
}

func (d *damaged) outboxJSON(t *testing.T, args ...string) listJSON[outboxEntryJSON] {
	t.Helper()
	return parseListJSON[outboxEntryJSON](t, d.run(t, exitOK, append([]string{"outbox", "list", "--json"}, args...)...))
}

func (d *damaged) quarantineJSON(t *testing.T, args ...string) listJSON[quarantineEntryJSON] {
	t.Helper()
	return parseListJSON[quarantineEntryJSON](t, d.run(t, exitOK, append([]string{"quarantine", "list", "--json"}, args...)...))
}

// reasons lists "state:reason" (outbox) of each entry, in order.
func reasons(l listJSON[outboxEntryJSON]) []string {
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.State+":"+e.Reason)
	}
	return out
}

func TestOutboxListFiltersByStateReasonTabAndLimit(t *testing.T) {
	d := openDamaged(t)
	d.close(t)
	all := d.outboxJSON(t, "--limit", "0")
	if all.Total != int64(len(all.Entries)) || all.Total < 8 {
		t.Fatalf("all: %d of %d", len(all.Entries), all.Total)
	}
	failed := d.outboxJSON(t, "--state", "failed")
	if got := strings.Join(reasons(failed), " "); got != "failed:sheet_header_drift failed:row_hash_mismatch" || failed.Total != 2 {
		t.Fatalf("--state failed: %s (total %d)", got, failed.Total)
	}
	if !failed.Entries[1].Terminal || failed.Entries[1].Anchor != "b" || failed.Entries[1].Tab != "Ticket_System" ||
		failed.Entries[1].EntityID != "b" || failed.Entries[1].Op != "update" || failed.Entries[1].Attempts != 1 {
		t.Fatalf("the guard-failed entry: %+v", failed.Entries[1])
	}
	if l := d.outboxJSON(t, "--state", "failed,applied", "--state", "pending"); l.Total != all.Total {
		t.Fatalf("failed,applied + pending: %d of %d", l.Total, all.Total)
	}
	if l := d.outboxJSON(t, "--reason", "row_hash_mismatch"); len(l.Entries) != 1 || l.Entries[0].Anchor != "b" {
		t.Fatalf("--reason: %+v", l)
	}
	if l := d.outboxJSON(t, "--tab", "Ticket_Input", "--limit", "0"); l.Total == 0 || l.Total == all.Total {
		t.Fatalf("--tab Ticket_Input: %d of %d", l.Total, all.Total)
	} else {
		for _, e := range l.Entries {
			if e.Tab != "Ticket_Input" {
				t.Fatalf("--tab Ticket_Input listed %+v", e)
			}
		}
	}
	if l := d.outboxJSON(t, "--limit", "3"); len(l.Entries) != 3 || l.Total != all.Total || l.Entries[0].ID != all.Entries[0].ID {
		t.Fatalf("--limit 3: %d of %d", len(l.Entries), l.Total)
	}
	text := d.run(t, exitOK, "outbox", "list", "--state", "failed")
	for _, want := range []string{"EFFECT", "REASON", "failed (terminal)", "row_hash_mismatch", "sheet_header_drift", "Ticket_System"} {
		if !strings.Contains(text, want) {
			t.Fatalf("table lacks %q:\n%s", want, text)
		}
	}
	if text := d.run(t, exitOK, "outbox", "list", "--limit", "1"); !strings.Contains(text, fmt.Sprintf("1 of %d shown", all.Total)) {
		t.Fatalf("a cut list does not say so:\n%s", text)
	}
}

func TestOutboxShowNamesTheFieldsAndPrintsValuesOnlyWithValues(t *testing.T) {
	d := openDamaged(t)
	d.close(t)
	id := d.outboxJSON(t, "--reason", "sheet_header_drift").Entries[0].ID
	text := d.run(t, exitOK, "outbox", "show", id)
	if !strings.Contains(text, "sheet_header_drift") || !strings.Contains(text, "title") || strings.Contains(text, secret) {
		t.Fatalf("show:\n%s", text)
	}
	var e outboxEntryJSON
	if err := json.Unmarshal([]byte(d.run(t, exitOK, "outbox", "show", "--json", id)), &e); err != nil {
		t.Fatal(err)
	}
	if e.ID != id || e.State != "failed" || len(e.Fields) == 0 || e.Values != nil {
		t.Fatalf("show --json: %+v", e)
	}
	if err := json.Unmarshal([]byte(d.run(t, exitOK, "outbox", "show", "--json", "--values", id)), &e); err != nil {
		t.Fatal(err)
	}
	if e.Values["title"] != secret+"c2" {
		t.Fatalf("show --values: %v", e.Values)
	}
	if text := d.run(t, exitOK, "outbox", "show", "--values", id); !strings.Contains(text, `value title`) || !strings.Contains(text, secret+"c2") {
		t.Fatalf("show --values:\n%s", text)
	}
}

func TestInspectionPrintsNoCellValueNorSpreadsheetIDByDefault(t *testing.T) {
	d := openDamaged(t)
	d.close(t)
	all := d.outboxJSON(t, "--limit", "0")
	q := d.quarantineJSON(t, "--all")
	cmds := [][]string{{"status"}, {"status", "--json"}, {"outbox", "list", "--limit", "0"}, {"outbox", "list", "--json", "--limit", "0"},
		{"quarantine", "list", "--all"}, {"quarantine", "list", "--all", "--json"}}
	for _, e := range all.Entries {
		cmds = append(cmds, []string{"outbox", "show", e.ID}, []string{"outbox", "show", "--json", e.ID})
	}
	for _, r := range q.Entries {
		cmds = append(cmds, []string{"quarantine", "show", r.ID}, []string{"quarantine", "show", "--json", r.ID})
	}
	for _, args := range cmds {
		out := d.run(t, exitOK, args...)
		if strings.Contains(out, secret) || strings.Contains(out, hikouteitest.SpreadsheetID) {
			t.Fatalf("%v prints a cell value or the spreadsheet id:\n%s", args, out)
		}
	}
}

func TestQuarantineListAndShowActiveAndCleared(t *testing.T) {
	d := openDamaged(t)
	d.close(t)
	active := d.quarantineJSON(t)
	got := map[string]quarantineEntryJSON{}
	for _, r := range active.Entries {
		got[r.Reason] = r
	}
	if active.Total != 2 || got["cell_type_mismatch"].Anchor != "a" || got["cell_type_mismatch"].Column != "qty" || got["row_deleted"].Anchor != "c" {
		t.Fatalf("active: %+v", active)
	}
	if l := d.quarantineJSON(t, "--active"); l.Total != 2 {
		t.Fatalf("--active: %+v", l)
	}
	all := d.quarantineJSON(t, "--all")
	if all.Total != 3 {
		t.Fatalf("--all: %+v", all)
	}
	var cleared quarantineEntryJSON
	for _, r := range all.Entries {
		if !r.Active {
			cleared = r
		}
	}
	if cleared.Reason != "cell_formula" || cleared.ClearedSeq <= cleared.Seq {
		t.Fatalf("the cleared record: %+v", cleared)
	}
	if l := d.quarantineJSON(t, "--all", "--reason", "row_deleted", "--tab", "Ticket_Input"); l.Total != 1 || l.Entries[0].Anchor != "c" {
		t.Fatalf("--reason row_deleted: %+v", l)
	}
	if l := d.quarantineJSON(t, "--tab", "Ticket_System"); l.Total != 0 || l.Entries == nil {
		t.Fatalf("--tab Ticket_System: %+v", l)
	}
	text := d.run(t, exitOK, "quarantine", "show", cleared.ID)
	if !strings.Contains(text, "cell_formula") || !strings.Contains(text, "cleared at seq") {
		t.Fatalf("show:\n%s", text)
	}
	var one quarantineEntryJSON
	if err := json.Unmarshal([]byte(d.run(t, exitOK, "quarantine", "show", "--json", cleared.ID)), &one); err != nil || one != cleared {
		t.Fatalf("show --json: %+v %v", one, err)
	}
}

func TestUnknownOutboxOrQuarantineIDFailsWithItsCode(t *testing.T) {
	d := openDamaged(t)
	d.close(t)
	if out := d.run(t, exitFailure, "outbox", "show", "fx0000000000000000"); !strings.Contains(out, "outbox_entry_not_found") {
		t.Fatalf("outbox show:\n%s", out)
	}
	if out := d.run(t, exitFailure, "quarantine", "show", "q0000000000000000"); !strings.Contains(out, "quarantine_entry_not_found") {
		t.Fatalf("quarantine show:\n%s", out)
	}
}

func TestInspectionUsageErrorsExitTwo(t *testing.T) {
	d := openDamaged(t)
	d.close(t)
	for _, args := range [][]string{{"outbox", "list", "--state", "broken"}, {"outbox", "list", "--limit", "-1"},
		{"quarantine", "list", "--active", "--all"}, {"outbox", "show"}, {"quarantine", "show", "a", "b"}, {"outbox"}} {
		d.run(t, exitUsage, args...)
	}
	if code, out := runCLI(t, "outbox", "list"); code != exitUsage {
		t.Fatalf("no --dir: exit %d\n%s", code, out)
	}
}

func TestInspectionWorksWhileAWriterHoldsTheStore(t *testing.T) {
	d := openDamaged(t) // left open: this process holds the writer lease and log.db
	if out := d.run(t, exitOK, "status"); !strings.Contains(out, "(held by the writer)") {
		t.Fatalf("the store is not held:\n%s", out)
	}
	if l := d.outboxJSON(t, "--state", "failed"); l.Total != 2 {
		t.Fatalf("outbox list while open: %+v", l)
	}
	if l := d.quarantineJSON(t); l.Total != 2 {
		t.Fatalf("quarantine list while open: %+v", l)
	}
	id := d.outboxJSON(t, "--reason", "row_hash_mismatch").Entries[0].ID
	d.run(t, exitOK, "outbox", "show", id)
	if out := d.run(t, exitOK, "status"); !strings.Contains(out, "outbox failed by reason") {
		t.Fatalf("status while open:\n%s", out)
	}
}

func TestInspectionOfAMissingStoreFailsAsStatusDoes(t *testing.T) {
	lost := storeWithItems(t, 1)
	if err := os.Remove(filepath.Join(lost, events.LogFileName)); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{t.TempDir(), lost} { // not a store; a store without its log
		_, status := runCLI(t, "status", "--dir", dir)
		for _, args := range [][]string{{"outbox", "list"}, {"quarantine", "list"}, {"outbox", "show", "x"}, {"quarantine", "show", "x"}} {
			code, out := runCLI(t, append(args, "--dir", dir)...)
			if code != exitFailure || firstLine(out) != firstLine(status) {
				t.Fatalf("%v on %s: exit %d\n%s\nstatus says:\n%s", args, dir, code, out, status)
			}
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func TestStatusCountsFailuresAndQuarantineByReasonAndNamesTheCommands(t *testing.T) {
	d := openDamaged(t)
	d.close(t)
	out := d.run(t, exitOK, "status")
	for _, want := range []string{"outbox failed  ", "outbox failed by reason  row_hash_mismatch 1, sheet_header_drift 1",
		"quarantined by reason    cell_type_mismatch 1, row_deleted 1", "hikoutei outbox list --dir " + d.dir + " --state failed",
		"hikoutei quarantine list --dir " + d.dir} {
		if !strings.Contains(out, want) {
			t.Fatalf("status lacks %q:\n%s", want, out)
		}
	}
	var st storeStatus
	if err := json.Unmarshal([]byte(d.run(t, exitOK, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.OutboxReasons["failed"]["row_hash_mismatch"] != 1 || st.OutboxReasons["failed"]["sheet_header_drift"] != 1 ||
		st.QuarantineReasons["row_deleted"] != 1 || st.QuarantineReasons["cell_type_mismatch"] != 1 || st.Quarantined != 2 {
		t.Fatalf("status --json: %+v", st)
	}
	if _, out := runCLI(t, "status", "--dir", storeWithItems(t, 1)); strings.Contains(out, "by reason") || strings.Contains(out, "list them") {
		t.Fatalf("a healthy store's status shows a reason block:\n%s", out)
	}
}

func TestStatusCommandsQuoteADirThatNeedsQuoting(t *testing.T) {
	for in, want := range map[string]string{"/srv/shop": "/srv/shop", "/srv/my shop": "'/srv/my shop'", "/srv/it's": `'/srv/it'\''s'`} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}
