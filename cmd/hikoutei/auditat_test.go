package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// itemHistory is a closed store where item I1 was created ("one"),
// renamed ("two", after a snapshot) and removed, one second apart.
type itemHistory struct {
	dir                    string
	created, renamed, gone hikoutei.CommitResult
	renamedAt              time.Time
}

func newItemHistory(t *testing.T) itemHistory {
	t.Helper()
	h := itemHistory{dir: t.TempDir()}
	clock := events.NewManualClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	s, err := hikoutei.Open(t.Context(), h.dir, hikoutei.Options{Clock: clock, HeartbeatInterval: -1}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	step := func(remove bool, name string) hikoutei.CommitResult {
		clock.Advance(time.Second)
		u := s.Begin()
		op := u.Persist
		if remove {
			op = u.Remove
		}
		if err := op(&item{ID: "I1", Name: name}); err != nil {
			t.Fatal(err)
		}
		res, err := u.Commit(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	h.created = step(false, "one")
	if _, err := s.Snapshot(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.renamed, h.renamedAt = step(false, "two"), clock.Now()
	h.gone = step(true, "two")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestAuditAtPrintsTheStateThenAndItsHistory: `audit --at` prints the
// record as it was at a sequence or a time (absent once removed) and the
// record's events up to that point only (a time resolves to the last
// sequence recorded at or before it).
func TestAuditAtPrintsTheStateThenAndItsHistory(t *testing.T) {
	t.Parallel()
	h := newItemHistory(t)
	cases := []struct {
		at, state string
		history   int
	}{
		{fmt.Sprint(h.created.LastSeq), `{"id":"I1","name":"one"}`, 1},
		{h.renamedAt.Add(500 * time.Millisecond).Format(time.RFC3339Nano), `{"id":"I1","name":"two"}`, 2},
		{fmt.Sprint(h.gone.LastSeq), "absent", 3},
	}
	for _, c := range cases {
		code, out, errOut := runSplit("audit", "--dir", h.dir, "--entity", "Item", "--id", "I1", "--at", c.at)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != exitOK || !strings.HasSuffix(lines[0], ": "+c.state) || len(lines)-1 != c.history {
			t.Errorf("--at %s: exit %d, want state %s and %d events:\n%s%s", c.at, code, c.state, c.history, out, errOut)
			continue
		}
		for _, l := range lines[1:] {
			if !strings.Contains(l, " entity/Item/I1 ") {
				t.Errorf("--at %s: history line %q", c.at, l)
			}
		}
	}
}

// TestAuditAtJSONLinesParse: with --json the first line is the state
// (seq, at, entity, id, state) and every other line an event up to seq.
func TestAuditAtJSONLinesParse(t *testing.T) {
	h := newItemHistory(t)
	code, out, errOut := runSplit("audit", "--dir", h.dir, "--entity", "Item", "--id", "I1", "--at", fmt.Sprint(h.renamed.LastSeq), "--json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var state struct {
		Seq        uint64
		At         time.Time
		Entity, ID string
		State      map[string]any
	}
	if err := json.Unmarshal([]byte(lines[0]), &state); err != nil || state.Seq != h.renamed.LastSeq || state.State["name"] != "two" ||
		!state.At.Equal(h.renamedAt) || state.Entity != "Item" || state.ID != "I1" {
		t.Fatalf("state line %s: %+v, %v", lines[0], state, err)
	}
	for _, l := range lines[1:] {
		var e struct {
			Seq  uint64
			Type string
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Type == "" || e.Seq > h.renamed.LastSeq {
			t.Errorf("event line %s: %+v, %v", l, e, err)
		}
	}
	if len(lines) != 3 {
		t.Errorf("%d lines, want the state and 2 events:\n%s", len(lines), out)
	}
}

// TestAuditAtRefusesBadFlags: a malformed --at, --at without --id, or
// with --to, --as-of or a mirror exits 2 with the usage; a sequence past
// the head is as_of_out_of_range (exit 1).
func TestAuditAtRefusesBadFlags(t *testing.T) {
	dir := closedItemStore(t)
	audit := findCommand(t, []string{"audit"})
	base := []string{"audit", "--dir", dir, "--entity", "Item", "--id", "I1"}
	for _, extra := range [][]string{{"--at", ""}, {"--at", "yesterday"}, {"--at", "-3"}, {"--at", "2026-13-01T00:00:00Z"}, {"--at", "1", "--to", "2"},
		{"--at", "1", "--as-of", "2026-12-01T00:00:00Z"}} {
		wantUsage(t, audit, append(append([]string{}, base...), extra...))
	}
	wantUsage(t, audit, []string{"audit", "--dir", dir, "--entity", "Item", "--at", "1"})
	wantUsage(t, audit, []string{"audit", "--nats", "nats://127.0.0.1:1", "--stream", "S", "--entity", "Item", "--id", "I1", "--at", "1"})
	for _, at := range []string{"0", "999999", "2000-01-01T00:00:00Z"} {
		if code, out, errOut := runSplit(append(base, "--at", at)...); code != exitFailure || !strings.Contains(errOut, "as_of_out_of_range") {
			t.Errorf("--at %s: exit %d, want 1 with as_of_out_of_range:\n%s%s", at, code, out, errOut)
		}
	}
	if code, out, _ := runSplit("audit", "--help"); code != exitOK || !strings.Contains(out, "--at SEQ|TIME") {
		t.Errorf("audit --help: exit %d, no --at:\n%s", code, out)
	}
}

// TestAuditAtOnARunningStoreReadsACopy: while a process holds the store,
// `audit --at` reads the copy of the log it writes through its
// administrative channel and says so.
func TestAuditAtOnARunningStoreReadsACopy(t *testing.T) {
	t.Parallel()
	h := newItemHistory(t)
	s, err := hikoutei.Open(t.Context(), h.dir, hikoutei.Options{HeartbeatInterval: -1}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, out, errOut := runSplit("audit", "--dir", h.dir, "--entity", "Item", "--id", "I1", "--at", fmt.Sprint(h.created.LastSeq))
	if code != exitOK || !strings.Contains(out, `{"id":"I1","name":"one"}`) || !strings.Contains(errOut, "audited a copy of its log") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
}

// FuzzParseAt: any --at value is a point or an error, never a panic; a
// string of digits is that sequence, and a time parses as RFC 3339.
func FuzzParseAt(f *testing.F) {
	for _, s := range []string{"1", "0", "18446744073709551615", "18446744073709551616", "2026-12-01T09:00:00Z",
		"2026-12-01T09:00:00.123456789+09:00", "", "-1", "yesterday", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseAt(s)
		if err != nil {
			if !strings.Contains(err.Error(), `flag "--at"`) {
				t.Fatalf("%q: %v does not name the flag", s, err)
			}
			return
		}
		if seq, serr := strconv.ParseUint(s, 10, 64); serr == nil && p != hikoutei.AtSeq(seq) {
			t.Fatalf("%q: %v, want seq %d", s, p, seq)
		}
	})
}

// TestAuditAtATimeCoversItsWrittenUnit: audit prints times to the
// millisecond, so a time copied from its output must include the events
// printed with it, though they were recorded later within that millisecond.
func TestAuditAtATimeCoversItsWrittenUnit(t *testing.T) {
	dir := t.TempDir()
	clock := events.NewManualClock(time.Date(2026, 12, 1, 9, 0, 0, 341433, time.UTC))
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Clock: clock, HeartbeatInterval: -1}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	u := s.Begin()
	if err := u.Persist(&item{ID: "I1", Name: "one"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{"2026-12-01T09:00:01.000Z", "2026-12-01T09:00:01Z"} {
		code, out, errOut := runSplit("audit", "--dir", dir, "--entity", "Item", "--id", "I1", "--at", at)
		if first, _, _ := strings.Cut(out, "\n"); code != exitOK || !strings.HasSuffix(first, `: {"id":"I1","name":"one"}`) {
			t.Errorf("--at %s: exit %d, want the record committed within that unit:\n%s%s", at, code, out, errOut)
		}
	}
}

func TestWrittenPrecisionIsTheUnitOfTheLastDigit(t *testing.T) {
	for s, want := range map[string]time.Duration{"2026-12-01T09:00:01Z": time.Second, "2026-12-01T09:00:01.4Z": 100 * time.Millisecond,
		"2026-12-01T09:00:01.472+01:00": time.Millisecond, "2026-12-01T09:00:01.472341433Z": time.Nanosecond} {
		if got := writtenPrecision(s); got != want {
			t.Errorf("writtenPrecision(%q) = %v, want %v", s, got, want)
		}
	}
}
