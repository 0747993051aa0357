package aggregates

import (
	"errors"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

func terminalHead(observed string) Effect {
	e := effect("GKA", 3, EffectFailed)
	e.Terminal, e.ObservedHash, e.LastCode, e.Version = true, observed, "invalid_range", 4
	return e
}

func TestI10_CorrectionPicksAppendUpdateDeleteOrNoneGuardedByTheObservedHash(t *testing.T) {
	cols := []string{keyField, "name", "notes", "alt"}
	vals := map[string]any{keyField: "GKA", "name": "Goroka", "alt": int64(5282), "internal": "not shown"}
	shownVals := map[string]any{keyField: "GKA", "name": "Goroka", "alt": int64(5282)} // notes has no value: left out
	for _, tc := range []struct {
		name     string
		observed string
		exists   bool
		ok       bool
		op       events.Op
		values   map[string]any
	}{
		{"entity live, row shows something else: update", "row-seen", true, true, events.OpUpdate, shownVals},
		{"entity live, row missing: append", "", true, true, events.OpAppend, shownVals},
		{"entity removed, row still there: delete", "row-seen", false, true, events.OpDelete, nil},
		{"entity removed, row gone: nothing", "", false, false, "", nil},
	} {
		e := terminalHead(tc.observed)
		q, ok := Correction(e, vals, tc.exists, cols)
		if ok != tc.ok {
			t.Fatalf("%s: ok = %v", tc.name, ok)
		}
		if !ok {
			continue
		}
		if q.Op != tc.op || !reflect.DeepEqual(q.Values, tc.values) {
			t.Errorf("%s: op %s values %v, want %s %v", tc.name, q.Op, q.Values, tc.op, tc.values)
		}
		if q.ExpectedHash != tc.observed || q.Target != e.Target || q.Entity != "Airport" || q.ID != "GKA" {
			t.Errorf("%s: queue %+v must target the failed effect's row, guarded by %q", tc.name, q, tc.observed)
		}
	}
}

// A write that failed because its anchor shows on several rows is
// superseded alone: every write of that row fails the same way while the
// copies are there, so queuing one would supersede one by the next
// forever; anti-entropy reads the copies and removes one.
func TestI10_AWriteThatFoundItsAnchorDuplicatedIsSupersededWithoutAReplacement(t *testing.T) {
	for _, exists := range []bool{true, false} {
		head := terminalHead("")
		head.LastCode = CodeAnchorDuplicated
		if q, ok := Correction(head, map[string]any{keyField: "GKA", "name": "Goroka"}, exists, []string{keyField, "name"}); ok {
			t.Fatalf("entity live %v: a correction of a duplicated anchor was queued: %+v", exists, q)
		}
	}
}

func TestI10_CorrectionQueuedAtTheNextStreamSequenceBecomesTheClaimableHead(t *testing.T) {
	head := terminalHead("row-seen")
	head.QueuedSeq = 10
	q, ok := Correction(head, map[string]any{keyField: "GKA", "name": "Goroka"}, true, []string{keyField, "name"})
	if !ok {
		t.Fatal("no correction")
	}
	qd, id, err := DecideQueue(head.StreamSeq, q, now) // the row's outbox is at the head's sequence
	if err != nil {
		t.Fatal(err)
	}
	sd, err := DecideSupersede(head, id, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (events.EffectSuperseded{EffectID: head.ID, By: id}); sd.Events[0].Payload != want || sd.ExpectedVersion != head.Version {
		t.Fatalf("supersede %+v, want %+v", sd, want)
	}
	qp := qd.Events[0].Payload.(events.EffectQueued)
	if qp.ExpectedHash != "row-seen" || qp.StreamSequence != head.StreamSeq+1 {
		t.Fatalf("replacement %+v", qp)
	}
	repl := Effect{ID: id, Target: head.Target, StreamSeq: qp.StreamSequence, QueuedSeq: 11, State: EffectPending}
	wedged := ClaimableHeads([]Effect{head, repl}, now, 10)
	if len(wedged) != 0 {
		t.Fatalf("behind a terminal head nothing is claimable, got %v", wedged)
	}
	head = foldEffect(t, head, sd)
	got := ClaimableHeads([]Effect{head, repl}, now, 10)
	if len(got) != 1 || got[0].ID != id {
		t.Fatalf("after supersede the correction must be the claimable head, got %v", got)
	}
}

func TestI10_DecideSupersedeRefusesRecoverableFailures(t *testing.T) {
	retry := effect("GKA", 1, EffectFailed)
	retry.DueAt = later
	if _, err := DecideSupersede(retry, "fx-repl", now); !errors.Is(err, ErrNotSupersedable) {
		t.Fatalf("a recoverable failed effect stays on the retry path: %v, want ErrNotSupersedable", err)
	}
	for _, s := range EffectStates {
		if s == EffectFailed {
			continue
		}
		e := effect("GKA", 1, s)
		e.Terminal = true // only a failed state may be superseded, whatever the flag says
		if _, err := DecideSupersede(e, "fx-repl", now); !errors.Is(err, ErrNotSupersedable) {
			t.Errorf("supersede of a %s effect: %v, want ErrNotSupersedable", s, err)
		}
	}
	d, err := DecideSupersede(terminalHead(""), "", now)
	if err != nil || d.Events[0].Payload.(events.EffectSuperseded).By != "" {
		t.Fatalf("supersede without a replacement (the row needs no write): %+v %v", d, err)
	}
}

func TestI28_DecideFoldSupersedesOnlyPendingEffectsBehindAReplacedTerminalFailure(t *testing.T) {
	failed := terminalHead("")
	behind := effect("GKA", 4, EffectPending)
	d, err := decideFold(behind, failed, "fx-repl", now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (events.EffectSuperseded{EffectID: behind.ID, By: "fx-repl"}); d.Events[0].Payload != want || d.ExpectedVersion != behind.Version {
		t.Fatalf("fold %+v, want %+v", d, want)
	}
	other := effect("LAE", 4, EffectPending)
	earlier := effect("GKA", 2, EffectPending)
	uncertain := effect("GKA", 5, EffectUncertain)
	recoverable := terminalHead("")
	recoverable.Terminal = false
	for name, tc := range map[string]struct {
		e, failed   Effect
		replacement string
	}{
		"another row": {other, failed, "fx-repl"}, "queued before the failure": {earlier, failed, "fx-repl"},
		"in flight": {uncertain, failed, "fx-repl"}, "no correction": {behind, failed, ""},
		"a recoverable failure": {behind, recoverable, "fx-repl"},
	} {
		if _, err := decideFold(tc.e, tc.failed, tc.replacement, now); !errors.Is(err, ErrNotSupersedable) {
			t.Errorf("%s: %v, want ErrNotSupersedable", name, err)
		}
	}
}

// F5: a correction never queues a write of no cell (the provider refuses
// it, invalid_op, and its correction would be the same write, forever);
// a Sync_Conflicts row's correction writes what the row's effects wrote,
// in order (the OPEN append, then the RESOLVED update), but the person's
// choice cell: a full-row CAS update over the row the failure observed,
// an append when the row is gone, nothing when nothing was written.
func TestF5_CorrectionsNeverWriteNoCellAndAConflictRowIsRewrittenWhole(t *testing.T) {
	if _, ok := Correction(terminalHead("seen"), map[string]any{"x": "1"}, true, []string{"name"}); ok {
		t.Fatal("a correction of no cell was queued")
	}
	row := Target{Spreadsheet: "s", Tab: "Sync_Conflicts", Anchor: "cf1", Binding: "b"}
	opened := Effect{ID: "fx1", Target: row, StreamSeq: 1, Op: events.OpAppend, State: EffectApplied,
		Values: map[string]any{"conflict_id": "cf1", "system_value": "sys", "status": "OPEN"}}
	resolved := Effect{ID: "fx2", Target: row, StreamSeq: 2, Op: events.OpUpdate, State: EffectFailed, Terminal: true,
		LastCode: "row_hash_mismatch", ObservedHash: "edited", Values: map[string]any{"status": "RESOLVED", "resolution_result": "keep system", "resolution": ""}}
	copyRemoved := Effect{ID: "fx3", Target: row, StreamSeq: 3, Op: events.OpDelete, State: EffectApplied}
	q, ok := ConflictRowCorrection(resolved, []Effect{opened, resolved, copyRemoved}, "resolution")
	want := map[string]any{"conflict_id": "cf1", "system_value": "sys", "status": "RESOLVED", "resolution_result": "keep system"}
	if !ok || q.Op != events.OpUpdate || q.ExpectedHash != "edited" || !reflect.DeepEqual(q.Values, want) {
		t.Fatalf("correction %+v %v", q, ok)
	}
	gone := resolved
	gone.ObservedHash, gone.LastCode = "", "anchor_not_found"
	if q, ok := ConflictRowCorrection(gone, []Effect{opened, gone}, "resolution"); !ok || q.Op != events.OpAppend || q.ExpectedHash != "" {
		t.Fatalf("a row that is gone: %+v %v", q, ok)
	}
	refused := resolved
	refused.ObservedHash, refused.LastCode = "", "invalid_op"
	if q, ok := ConflictRowCorrection(refused, []Effect{opened, refused}, "resolution"); !ok || q.Op != events.OpUpdate || q.ExpectedHash != "" {
		t.Fatalf("a failure that observed no row: %+v %v (want an update guarded by no row: it fails with the row it finds)", q, ok)
	}
	if _, ok := ConflictRowCorrection(copyRemoved, []Effect{copyRemoved}, "resolution"); ok {
		t.Fatal("a correction of a row nothing was written to")
	}
}
