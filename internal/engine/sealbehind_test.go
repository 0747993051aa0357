package engine

import (
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/retention"
)

// A background seal whose log commit stands counts as a seal even when
// the read model could not record it (read_model_behind): the retention
// status stays on, with no failure, and the next commit catches the read
// model up.
func TestI38_ABackgroundSealTheReadModelCouldNotRecordCountsAsASeal(t *testing.T) {
	fault := &Fault{}
	shape := events.EntityShape{Name: "Note", PK: "id", Fields: []events.FieldShape{{Name: "text", Kind: events.KindString, Owner: events.OwnerSystem}}}
	e, err := Open(t.TempDir(), Config{Clock: events.NewManualClock(time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)), HeartbeatInterval: -1,
		AcquireWait: -1, Fault: fault}, Shapes(shape))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	note := func(id string) {
		t.Helper()
		if _, err := e.Commit([]Command{{Entity: "Note", ID: id, Values: map[string]any{"text": "t" + id}}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		note(string(rune('a' + i)))
	}
	done := make(chan struct{})
	close(done)
	r := &retainer{policy: retention.Policy{KeepRecords: 5, MinBatch: 10}, done: done, changed: make(chan struct{}),
		status: RetentionStatus{State: RetentionOn}} // no background retainer: the test runs it once
	if err := e.onWriter(func() error { e.retain = r; return nil }); err != nil {
		t.Fatal(err)
	}
	fault.FailNextProjection = true
	e.retainOnce()
	r.mu.Lock()
	st := r.status // RetentionStatus says off: the store was opened without a policy
	r.mu.Unlock()
	if st.State != RetentionOn || st.Seals != 1 || st.Failures != 0 || st.Err != nil {
		t.Fatalf("a committed seal the read model missed: %+v", st)
	}
	if segs, err := e.Log().Segments(); err != nil || len(segs) != 1 {
		t.Fatalf("segments %v %v", segs, err)
	}
	note("after")
	if head, err := e.Log().Head(); err != nil || e.Checkpoint() != head {
		t.Fatalf("read model at %d after the next commit, log head %d (%v)", e.Checkpoint(), head, err)
	}
}
