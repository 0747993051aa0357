package effects_test

import (
	"errors"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/effects/outboxtest"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

var testFence = sheetsio.Fence{StoreID: "store-under-test", Epoch: 1, Token: "token-1"}

// memSubject is MemOutbox as a conformance subject.
type memSubject struct {
	*effects.MemOutbox
	clock *events.ManualClock
}

func newMemSubject(t *testing.T) outboxtest.Subject {
	clock := events.NewManualClock(t0)
	return memSubject{effects.NewMemOutbox(effects.MemOutboxConfig{Clock: clock, Fence: testFence, Schema: outboxtest.Layout()}), clock}
}

func (m memSubject) Spreadsheet() string { return "sheets" }

func (m memSubject) Commit(t *testing.T, entity, id string, values map[string]any) []string {
	t.Helper()
	ids, err := m.MemOutbox.Commit(entity, id, values)
	if err != nil {
		t.Fatalf("commit %s %s: %v", entity, id, err)
	}
	return ids
}

func (m memSubject) Effect(_ *testing.T, id string) (aggregates.Effect, bool) {
	return m.MemOutbox.Effect(id)
}

func (m memSubject) Displace(*testing.T) { m.MemOutbox.Displace() }

func (m memSubject) Advance(d time.Duration) { m.clock.Advance(d) }

// The effects.Outbox conformance suite (I04, I05, I07, I08, I09, I10)
// against the in-memory outbox.
func TestMemOutboxConformance(t *testing.T) { outboxtest.Run(t, newMemSubject) }

func TestMemOutboxEventsAreStampedAndOneUnitPerDecision(t *testing.T) {
	s := newMemSubject(t).(memSubject)
	ids := s.Commit(t, outboxtest.Shape.Name, "g1", map[string]any{"name": "one", "size": int64(1)})
	c, err := s.Claim("sheets", 10)
	if err != nil || len(c) != 1 {
		t.Fatalf("claim %v: %v", c, err)
	}
	evs := s.Events()
	var types []events.Type
	for i, e := range evs {
		types = append(types, e.Type())
		if e.Seq != uint64(i+1) || e.Epoch != 1 || e.Token != testFence.Token || !e.At.Equal(t0) {
			t.Fatalf("event %d stamped %+v", i, e)
		}
	}
	want := []events.Type{events.TypeEntityPersisted, events.TypeEffectQueued, events.TypeEffectClaimed}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	if evs[0].Commit != evs[1].Commit || evs[1].Commit == evs[2].Commit {
		t.Fatal("the change and its effect are not one unit, or the claim shares it")
	}
	if q := evs[1].Payload.(events.EffectQueued); q.EffectID != ids[0] || evs[1].Stream != events.OutboxStream(q.Binding) || evs[1].Version != 1 {
		t.Fatalf("queued %+v on %s v%d", q, evs[1].Stream, evs[1].Version)
	}
	if evs[2].Stream != events.EffectStream(ids[0]) || evs[2].Version != 1 {
		t.Fatalf("claim on %s v%d", evs[2].Stream, evs[2].Version)
	}
}

// QueueUnsynced queues the rows of entities set while sync was off, once.
func TestMemOutboxQueueUnsyncedQueuesRowsOfEntitiesNeverQueued(t *testing.T) {
	schema, err := layout.NewSchema(airportLayout())
	if err != nil {
		t.Fatal(err)
	}
	m := effects.NewMemOutbox(effects.MemOutboxConfig{Clock: events.NewManualClock(t0), Fence: testFence, Schema: schema})
	if err := m.SetEntity("Airport", "1", airport("Goroka", 5282)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Commit("Airport", "2", airport("Madang", 20)); err != nil {
		t.Fatal(err)
	}
	if err := m.SetEntity("Airport", "3", airport("Wewak", 19)); err != nil {
		t.Fatal(err)
	}
	if err := m.RemoveEntity("Airport", "3"); err != nil {
		t.Fatal(err)
	}
	if n, err := m.QueueUnsynced("another", 10); err != nil || n != 0 {
		t.Fatalf("another spreadsheet: %d %v", n, err)
	}
	if n, err := m.QueueUnsynced("sheets", 10); err != nil || n != 2 {
		t.Fatalf("queue unsynced: %d %v, want the entity's 2 rows", n, err)
	}
	var got []string
	for _, fx := range m.Effects() {
		if fx.EntityID == "1" {
			got = append(got, fx.Target.Tab+"/"+string(fx.Op))
			if fx.Target.Tab == "Airport_System" && !reflect.DeepEqual(fx.Values, map[string]any{"id": "1", "name": "Goroka", "altitude": int64(5282), "notes": nil}) {
				t.Fatalf("system row %v", fx.Values)
			}
		}
	}
	if !reflect.DeepEqual(got, []string{"Airport_System/append", "Airport_Input/append"}) {
		t.Fatalf("queued %v for the unsynced entity", got)
	}
	if n, err := m.QueueUnsynced("sheets", 10); err != nil || n != 0 {
		t.Fatalf("second pass: %d %v", n, err)
	}
}

func TestMemOutboxQueueAndDisplace(t *testing.T) {
	m := effects.NewMemOutbox(effects.MemOutboxConfig{Clock: events.NewManualClock(t0), Fence: testFence})
	target := aggregates.Target{Spreadsheet: "sheets", Tab: "T_System", Anchor: "a", Binding: layout.RowBindingID("T_System", "a")}
	id1, err := m.Queue(aggregates.Queue{Target: target, Op: events.OpAppend, Values: map[string]any{"v": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	id2, err := m.Queue(aggregates.Queue{Target: target, Op: events.OpUpdate, Values: map[string]any{"v": "2"}, ExpectedHash: "h"})
	if err != nil || id1 != aggregates.EffectID(target.Binding, 1) || id2 != aggregates.EffectID(target.Binding, 2) {
		t.Fatalf("ids %s %s: %v", id1, id2, err)
	}
	if fx, _ := m.Effect(id2); fx.StreamSeq != 2 || fx.ExpectedHash != "h" || fx.State != aggregates.EffectPending {
		t.Fatalf("second effect %+v", fx)
	}
	m.Displace()
	if _, err := m.Queue(aggregates.Queue{Target: target, Op: events.OpDelete}); !errors.Is(err, events.ErrStaleWriterFence) {
		t.Fatalf("queue after displacement: %v", err)
	}
	if err := m.SetEntity("T", "a", map[string]any{"v": "3"}); !errors.Is(err, events.ErrStaleWriterFence) {
		t.Fatalf("entity change after displacement: %v", err)
	}
	if len(m.Effects()) != 2 {
		t.Fatalf("%d effects after rejected appends", len(m.Effects()))
	}
}

// The pipelined dispatcher claims and settles from two goroutines.
func TestMemOutboxIsSafeForConcurrentClaimsAndSettlements(t *testing.T) {
	s := newMemSubject(t).(memSubject)
	for i := range 50 {
		s.Commit(t, outboxtest.Shape.Name, "g"+strconv.Itoa(i), map[string]any{"name": "n", "size": int64(i)})
	}
	var wg sync.WaitGroup
	claimed := make(chan []aggregates.Effect, 100)
	for range 4 {
		wg.Go(func() {
			for {
				c, err := s.Claim("sheets", 5)
				if err != nil || len(c) == 0 {
					return
				}
				claimed <- c
			}
		})
	}
	settled := make(chan error, 100)
	var sg sync.WaitGroup
	sg.Go(func() {
		for c := range claimed {
			out := make([]effects.Settlement, len(c))
			for i, fx := range c {
				out[i] = effects.Settlement{ID: fx.ID, ClaimToken: fx.ClaimToken, Outcome: aggregates.Outcome{Kind: aggregates.OutcomeApplied, WrittenHash: "h"}}
			}
			settled <- s.Settle(out)
		}
	})
	wg.Wait()
	close(claimed)
	sg.Wait()
	close(settled)
	for err := range settled {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, fx := range s.Effects() {
		if fx.State != aggregates.EffectApplied || fx.Attempts != 1 {
			t.Fatalf("effect %s: %s after %d claims", fx.ID, fx.State, fx.Attempts)
		}
	}
}
