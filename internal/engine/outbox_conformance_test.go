package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects/outboxtest"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// conformanceTTL outlives every clock jump of the suite (the heartbeat is
// off: the manual clock would not drive it).
const conformanceTTL = 1000 * time.Hour

// engineSubject is the engine as an effects.Outbox conformance subject.
type engineSubject struct {
	*engine.Engine
	clock *events.ManualClock
}

func newEngineSubject(t *testing.T) outboxtest.Subject {
	t.Helper()
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	prov, err := gsheets.New(context.Background(), gsheets.Config{Endpoint: srv.URL,
		Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	clock := events.NewManualClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	eng, err := engine.Open(t.TempDir(), engine.Config{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1,
		LeaseTTL: conformanceTTL, Logger: slog.New(slog.DiscardHandler),
		Sync: &engine.SyncConfig{SpreadsheetID: "x", Provider: prov, Manual: true, AuthorityTTL: conformanceTTL}},
		engine.Shapes(outboxtest.Shape))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return engineSubject{eng, clock}
}

func (s engineSubject) Spreadsheet() string { return s.Engine.Target() }

// Commit commits one unit and returns the effects it queued, read back
// from the log.
func (s engineSubject) Commit(t *testing.T, entity, id string, values map[string]any) []string {
	t.Helper()
	res, err := s.Engine.Commit([]engine.Command{{Entity: entity, ID: id, Values: values}})
	if err != nil {
		t.Fatalf("commit %s %s: %v", entity, id, err)
	}
	var ids []string
	if res.FirstSeq == 0 {
		return ids
	}
	stop := errors.New("stop")
	err = s.Log().ReadFrom(res.FirstSeq, func(e events.Event) error {
		if e.Seq > res.LastSeq {
			return stop
		}
		switch q := e.Payload.(type) {
		case events.EffectQueued:
			ids = append(ids, q.EffectID)
		case events.EffectCoalesced: // merged into its row's pending tail (I32)
			ids = append(ids, q.EffectID)
		}
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		t.Fatal(err)
	}
	return ids
}

// Effect reads the effect from the read model's outbox.
func (s engineSubject) Effect(t *testing.T, id string) (aggregates.Effect, bool) {
	t.Helper()
	conn, err := s.ReadConn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.PutConn(conn)
	var fx aggregates.Effect
	found := false
	err = sqlitex.Execute(conn, `SELECT effect_id, spreadsheet, tab, anchor, binding, stream_sequence, queued_seq, op, payload,
  payload_hash, entity, entity_id, state, coalesce(claim_token, ''), attempts, probes, terminal, coalesce(due_at, ''),
  coalesce(last_code, ''), version, coalesce(observed_hash, ''), coalesce(expected_hash, '')
FROM hk_outbox WHERE effect_id = ?`, &sqlitex.ExecOptions{Args: []any{id}, ResultFunc: func(st *sqlite.Stmt) error {
		found = true
		fx = aggregates.Effect{ID: st.ColumnText(0), StreamSeq: uint64(st.ColumnInt64(5)), QueuedSeq: uint64(st.ColumnInt64(6)),
			Target: aggregates.Target{Spreadsheet: st.ColumnText(1), Tab: st.ColumnText(2), Anchor: st.ColumnText(3), Binding: st.ColumnText(4)},
			Op:     events.Op(st.ColumnText(7)), PayloadHash: st.ColumnText(9), Entity: st.ColumnText(10), EntityID: st.ColumnText(11),
			State: aggregates.EffectState(st.ColumnText(12)), ClaimToken: st.ColumnText(13), Attempts: st.ColumnInt64(14),
			Probes: st.ColumnInt64(15), Terminal: st.ColumnInt64(16) != 0, LastCode: st.ColumnText(18),
			Version: uint64(st.ColumnInt64(19)), ObservedHash: st.ColumnText(20), ExpectedHash: st.ColumnText(21)}
		if due := st.ColumnText(17); due != "" {
			if fx.DueAt, err = time.Parse(projector.TimeLayout, due); err != nil {
				return err
			}
		}
		buf := make([]byte, st.ColumnLen(8))
		st.ColumnBytes(8, buf)
		v, err := events.DecodeCanonical(buf)
		if err != nil {
			return err
		}
		fx.Values, _ = v.(map[string]any)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return fx, found
}

// Displace lets the lease expire and has another writer acquire it.
func (s engineSubject) Displace(t *testing.T) {
	t.Helper()
	s.clock.Advance(conformanceTTL + time.Second)
	if _, err := s.Log().AcquireLease(events.AcquireRequest{WriterID: "new-owner"}); err != nil {
		t.Fatal(err)
	}
}

func (s engineSubject) Advance(d time.Duration) { s.clock.Advance(d) }

// The effects.Outbox conformance suite (I04, I05, I07, I08, I09, I10)
// against the engine.
func TestOutboxConformance(t *testing.T) { outboxtest.Run(t, newEngineSubject) }
