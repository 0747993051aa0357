package aggregates

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/hikoutei/hikoutei-go/events"
)

// Effect event types (ARCHITECTURE.md "Event envelope"). effect.queued goes
// to the target's outbox stream ("outbox/<binding>", whose version is the
// effect's stream_sequence); every later transition goes to the effect's own
// stream ("effect/<id>").
const (
	TypeEffectQueued         = "effect.queued"
	TypeEffectClaimed        = "effect.claimed"
	TypeEffectApplied        = "effect.applied"
	TypeEffectFailed         = "effect.failed"
	TypeEffectUncertain      = "effect.delivery_uncertain"
	TypeEffectProbeScheduled = "effect.probe_scheduled"
	TypeEffectSuperseded     = "effect.superseded"
	TypeEffectConflict       = "effect.conflict"
	TypeEffectBlocked        = "effect.blocked_candidate"
)

// Effect states, the outbox state machine of seed 000:
//
//	pending → processing → applied / failed / superseded / blocked_candidate / conflict
//	   └──────────────→ delivery_uncertain → (due probe) → pending / applied
type EffectState string

// States.
const (
	EffectPending    EffectState = "pending"
	EffectProcessing EffectState = "processing"
	EffectUncertain  EffectState = "delivery_uncertain"
	EffectApplied    EffectState = "applied"
	EffectFailed     EffectState = "failed"
	EffectSuperseded EffectState = "superseded"
	EffectConflict   EffectState = "conflict"
	EffectBlocked    EffectState = "blocked_candidate"
)

// Settled reports whether the effect no longer holds its target's stream:
// the next stream_sequence may be claimed (I07). A failed effect is not
// settled — a terminal failed head waits for reconciliation to supersede it.
func (s EffectState) Settled() bool {
	switch s {
	case EffectApplied, EffectSuperseded, EffectConflict, EffectBlocked:
		return true
	}
	return false
}

// Effect ops.
const (
	OpAppend = "append"
	OpUpdate = "update"
	OpDelete = "delete"
)

// TerminalUncertainTimeout is the failure code when probing gave up (I08).
const TerminalUncertainTimeout = "delivery_uncertain_timeout"

// Target is the row an effect writes: a tab of a spreadsheet and an anchor.
type Target struct {
	Spreadsheet string // the sync target's name (not the Google id)
	Tab         string // logical tab name, e.g. "Airport_System"
	Anchor      string
	Binding     string // layout.RowBindingID(Tab, Anchor)
}

// OutboxStream is the stream of a target's queued effects.
func OutboxStream(binding string) string { return "outbox/" + binding }

// EffectStream is the stream of one effect's transitions.
func EffectStream(id string) string { return "effect/" + id }

// EffectID is deterministic: the same target and stream_sequence always get
// the same id, so a replayed log queues the same effects (I09).
func EffectID(binding string, seq uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	return fmt.Sprintf("fx%016x", xxhash.Sum64(append([]byte(binding+"/"), b[:]...)))
}

// Effect is the decision-relevant state of one effect.
type Effect struct {
	ID          string
	Target      Target
	StreamSeq   uint64
	Op          string
	PayloadHash string
	State       EffectState
	ClaimToken  string
	Attempts    int64 // claims so far
	Probes      int64 // probes since the last claim
	Terminal    bool  // failed with a non-recoverable code
	Version     uint64
}

// Queue describes one effect to queue.
type Queue struct {
	Target Target
	Op     string
	Values map[string]any // canonical cell values by column (nil for delete)
	Entity string
	ID     string
}

// DecideQueue returns the effect.queued event for q at the target's next
// stream_sequence (outboxVersion+1) and the effect's id.
func DecideQueue(outboxVersion uint64, q Queue, now time.Time) (Decision, string, error) {
	seq := outboxVersion + 1
	id := EffectID(q.Target.Binding, seq)
	body := map[string]any{"op": q.Op, "tab": q.Target.Tab, "anchor": q.Target.Anchor, "values": valuesOrNil(q.Values)}
	hash, err := events.Hash(body)
	if err != nil {
		return Decision{}, "", fmt.Errorf("%w: effect payload: %w", ErrInvalidValue, err)
	}
	p := map[string]any{"effect_id": id, "spreadsheet": q.Target.Spreadsheet, "tab": q.Target.Tab, "anchor": q.Target.Anchor,
		"binding": q.Target.Binding, "stream_sequence": int64(seq), "op": q.Op, "values": valuesOrNil(q.Values),
		"payload_hash": hash, "entity": q.Entity, "id": q.ID}
	return Decision{Stream: OutboxStream(q.Target.Binding), ExpectedVersion: outboxVersion,
		Events: []events.Event{{Type: TypeEffectQueued, Schema: 1, At: now, Payload: p}}}, id, nil
}

func valuesOrNil(v map[string]any) any {
	if v == nil {
		return nil
	}
	return v
}

// DecideClaim claims a pending (or recoverably failed) effect whose target
// head it is. headSettled says every earlier stream_sequence of the target
// has settled (I07); due times are the caller's filter.
// Errors: ErrEffectNotClaimable.
func DecideClaim(e Effect, headSettled bool, token string, epoch uint64, now time.Time) (Decision, error) {
	retryable := e.State == EffectFailed && !e.Terminal
	if (e.State != EffectPending && !retryable) || !headSettled {
		return Decision{}, fmt.Errorf("%w: %s is %s (head settled: %v)", ErrEffectNotClaimable, e.ID, e.State, headSettled)
	}
	return transition(e, TypeEffectClaimed, now, map[string]any{"claim_token": token, "attempt": e.Attempts + 1, "epoch": int64(epoch)}), nil
}

func transition(e Effect, typ string, now time.Time, p map[string]any) Decision {
	p["effect_id"] = e.ID
	return Decision{Stream: EffectStream(e.ID), ExpectedVersion: e.Version,
		Events: []events.Event{{Type: typ, Schema: 1, At: now, Payload: p}}}
}

// Outcome is what a dispatch or probe learned about a claimed effect.
type Outcome struct {
	Kind     string // "applied", "uncertain", "failed", "retry", "conflict"
	Code     string // stable reason (failed/retry/uncertain/conflict)
	Terminal bool   // failed: never claimable again (I10)
	// WrittenHash: applied — the row's visible hash after the write; failed
	// or conflict — the row hash observed instead (evidence for a correction).
	WrittenHash string
	RetryAt     time.Time
	Via         string // "dispatch" or "probe"
	PayloadHash string // the receipt's payload hash (probe evidence), if any
}

// DecideSettle records the outcome of the claim identified by token.
// Errors: ErrStaleClaim (the claim is not current: I04 post-ack bookkeeping
// of a displaced claim is rejected), ErrEffectPayloadMismatch (a receipt for
// this effect id carries another payload: I09, fails closed as terminal).
func DecideSettle(e Effect, token string, o Outcome, now time.Time) (Decision, error) {
	if (e.State != EffectProcessing && e.State != EffectUncertain) || e.ClaimToken != token {
		return Decision{}, fmt.Errorf("%w: %s (state %s)", ErrStaleClaim, e.ID, e.State)
	}
	if o.PayloadHash != "" && o.PayloadHash != e.PayloadHash {
		o = Outcome{Kind: "failed", Code: ErrEffectPayloadMismatch.Error(), Terminal: true, Via: o.Via}
	}
	switch o.Kind {
	case "applied":
		return transition(e, TypeEffectApplied, now, map[string]any{"claim_token": token, "written_hash": o.WrittenHash, "via": o.Via}), nil
	case "uncertain":
		return transition(e, TypeEffectUncertain, now, map[string]any{"claim_token": token, "code": o.Code, "probe_at": o.RetryAt.UTC()}), nil
	case "conflict":
		return transition(e, TypeEffectConflict, now, map[string]any{"claim_token": token, "code": o.Code, "observed_hash": o.WrittenHash}), nil
	case "retry":
		return transition(e, TypeEffectFailed, now, map[string]any{"claim_token": token, "code": o.Code, "terminal": false, "retry_at": o.RetryAt.UTC()}), nil
	}
	return transition(e, TypeEffectFailed, now, map[string]any{"claim_token": token, "code": o.Code, "terminal": true,
		"retry_at": nil, "observed_hash": o.WrittenHash}), nil
}

// DecideProbeRescheduled records an inconclusive probe of an uncertain
// effect and its next due time; after maxProbes it fails terminally with
// TerminalUncertainTimeout (I08).
func DecideProbeRescheduled(e Effect, token string, maxProbes int64, next time.Time, now time.Time) (Decision, error) {
	if e.State != EffectUncertain || e.ClaimToken != token {
		return Decision{}, fmt.Errorf("%w: %s (state %s)", ErrStaleClaim, e.ID, e.State)
	}
	if e.Probes+1 >= maxProbes {
		return DecideSettle(e, token, Outcome{Kind: "failed", Code: TerminalUncertainTimeout, Terminal: true, Via: "probe"}, now)
	}
	return transition(e, TypeEffectProbeScheduled, now, map[string]any{"claim_token": token, "probes": e.Probes + 1, "probe_at": next.UTC()}), nil
}

// DecideSupersede marks a terminal failed head superseded by replacement
// (I10); recoverable failures are never superseded.
// Errors: ErrNotSupersedable.
func DecideSupersede(e Effect, replacement string, now time.Time) (Decision, error) {
	if e.State != EffectFailed || !e.Terminal {
		return Decision{}, fmt.Errorf("%w: %s is %s (terminal %v)", ErrNotSupersedable, e.ID, e.State, e.Terminal)
	}
	return transition(e, TypeEffectSuperseded, now, map[string]any{"by": replacement}), nil
}
