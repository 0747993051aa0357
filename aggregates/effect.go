package aggregates

import (
	"fmt"
	"sort"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// EffectState is a state of the outbox state machine (docs/invariants.md "Writing to the spreadsheet"):
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

// EffectStates lists every state, in the order of the state machine.
var EffectStates = []EffectState{EffectPending, EffectProcessing, EffectUncertain, EffectApplied, EffectFailed,
	EffectSuperseded, EffectConflict, EffectBlocked}

// Settled reports whether the effect no longer holds its target's stream:
// the next stream_sequence may be claimed (I07). A failed effect is not
// settled: a terminal failed head waits for reconciliation to supersede it.
func (s EffectState) Settled() bool {
	switch s {
	case EffectApplied, EffectSuperseded, EffectConflict, EffectBlocked:
		return true
	}
	return false
}

// Unsettled lists the states that hold a row's stream (I07): the read
// model's claim query is built from it, so the rule lives here only.
func Unsettled() []EffectState {
	var out []EffectState
	for _, s := range EffectStates {
		if !s.Settled() {
			out = append(out, s)
		}
	}
	return out
}

// TerminalUncertainTimeout is the failure code when probing gave up (I08).
const TerminalUncertainTimeout = "delivery_uncertain_timeout"

// Target is the row an effect writes: a tab of a spreadsheet and an anchor.
type Target struct {
	Spreadsheet string // the sync target's name (not the Google id)
	Tab         string // logical tab name, e.g. "Airport_System"
	Anchor      string
	Binding     string // the row's binding id (sheet layout: tab + anchor)
}

// EffectID is deterministic: the same target and stream_sequence always get
// the same id, so a replayed log queues the same effects (I09).
func EffectID(binding string, seq uint64) string {
	return events.EffectIDOf(binding, seq)
}

// Effect is one effect of the outbox: what was queued and where its state
// machine stands. It is the one shape of an effect: the read model returns
// it, decisions take it, the dispatcher sends it.
type Effect struct {
	ID          string
	Target      Target
	StreamSeq   uint64 // place among the row's effects (I07)
	QueuedSeq   uint64 // log sequence of effect.queued (queue order)
	Op          events.Op
	Values      map[string]any // cells by column (append: the row; update: changed cells; nil for delete)
	PayloadHash string
	Entity      string
	EntityID    string
	State       EffectState
	ClaimToken  string
	Attempts    int64 // claims so far
	Probes      int64 // probes since the last claim
	Terminal    bool  // failed with a non-recoverable code
	DueAt       time.Time
	LastCode    string
	Version     uint64 // the effect stream's version
	// ObservedHash is the row hash a failed guard found (correction evidence).
	ObservedHash string
	// ExpectedHash is the full-row visible hash the write is guarded by
	// (I06): set on a correction or reconcile at queue time, or by the
	// claim from the row's last applied write.
	ExpectedHash string
}

// Queue describes one effect to queue.
type Queue struct {
	Target Target
	Op     events.Op
	Values map[string]any // canonical cell values by column (nil for delete)
	Entity string
	ID     string
	// ExpectedHash, when set, guards the write by this full-row hash
	// instead of the row's last visible hash.
	ExpectedHash string
	// ValuesOf and KeyColumn, when set (ReferPersisted), make the record
	// refer to the entity.persisted of the same commit for Values.
	ValuesOf  uint64
	KeyColumn string
}

// DecideQueue returns the effect.queued event for q at the target's next
// stream_sequence (outboxVersion+1) and the effect's id.
// Errors: ErrInvalidValue (a value without canonical form).
func DecideQueue(outboxVersion uint64, q Queue, now time.Time) (Decision, string, error) {
	seq := outboxVersion + 1
	id := EffectID(q.Target.Binding, seq)
	hash, err := payloadHash(q.Op, q.Target, q.Values)
	if err != nil {
		return Decision{}, "", err
	}
	stream := events.OutboxStream(q.Target.Binding)
	p := events.EffectQueued{EffectID: id, Spreadsheet: q.Target.Spreadsheet, Tab: q.Target.Tab, Anchor: q.Target.Anchor,
		Binding: q.Target.Binding, StreamSequence: seq, Op: q.Op, Values: q.Values, PayloadHash: hash, Entity: q.Entity, ID: q.ID,
		ExpectedHash: q.ExpectedHash, ValuesOf: q.ValuesOf, KeyColumn: q.KeyColumn}
	return Decision{Stream: stream, ExpectedVersion: outboxVersion, Events: []events.Event{events.New(stream, p, now)}}, id, nil
}

func valuesOrNil(v map[string]any) any {
	if v == nil {
		return nil
	}
	return v
}

// Claimable reports whether e may be claimed at now, its row's earlier
// effects aside: pending or recoverably failed, and due.
func (e Effect) Claimable(now time.Time) bool {
	retryable := e.State == EffectFailed && !e.Terminal
	return (e.State == EffectPending || retryable) && !e.DueAt.After(now)
}

// ClaimableHeads applies the claim-order rule (I07) to a set of effects:
// for each row, the effect with the lowest stream_sequence that has not
// settled is its head, and only a claimable head may be claimed. It
// returns up to limit claimable heads in queue order.
func ClaimableHeads(fx []Effect, now time.Time, limit int) []Effect {
	heads := map[string]Effect{}
	for _, e := range fx {
		if h, ok := heads[e.Target.Binding]; !e.State.Settled() && (!ok || e.StreamSeq < h.StreamSeq) {
			heads[e.Target.Binding] = e
		}
	}
	var out []Effect
	for _, h := range heads {
		if h.Claimable(now) {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].QueuedSeq < out[j].QueuedSeq })
	return out[:min(len(out), max(limit, 0))]
}

// DecideClaim claims e, the head of its row (the caller found it with the
// claim-order rule, I07), for one dispatch. Errors: ErrEffectNotClaimable.
func DecideClaim(e Effect, token string, epoch uint64, now time.Time) (Decision, error) {
	retryable := e.State == EffectFailed && !e.Terminal
	if e.State != EffectPending && !retryable {
		return Decision{}, fmt.Errorf("%w: %s is %s", ErrEffectNotClaimable, e.ID, e.State)
	}
	return transition(e, events.EffectClaimed{EffectID: e.ID, ClaimToken: token, Attempt: e.Attempts + 1, Epoch: int64(epoch)}, now), nil
}

func transition(e Effect, p events.Payload, now time.Time) Decision {
	stream := events.EffectStream(e.ID)
	return Decision{Stream: stream, ExpectedVersion: e.Version, Events: []events.Event{events.New(stream, p, now)}}
}

// OutcomeKind is what a dispatch or probe learned about a claimed effect.
type OutcomeKind string

// Outcome kinds.
const (
	OutcomeApplied   OutcomeKind = "applied"   // the write landed
	OutcomeUncertain OutcomeKind = "uncertain" // unknown: probe later (I08)
	OutcomeFailed    OutcomeKind = "failed"    // an explicit structured rejection: terminal (I24)
	OutcomeRetry     OutcomeKind = "retry"     // nothing written: back on the retry path
	OutcomeConflict  OutcomeKind = "conflict"  // an Input row's guard met a person's edit
	// OutcomeMisdirected: the write landed on another row (C06,
	// Outcome.Misdirected); settled with decideMisdirected only.
	OutcomeMisdirected OutcomeKind = "misdirected"
)

// Outcome is what a dispatch or probe learned about a claimed effect.
type Outcome struct {
	Kind     OutcomeKind
	Code     string // stable reason (failed/retry/uncertain/conflict)
	Terminal bool   // failed: never claimable again (I10)
	// WrittenHash: applied — the row's visible hash after the write; failed
	// or conflict — the row hash observed instead (evidence for a correction).
	WrittenHash string
	RetryAt     time.Time
	Via         string // "dispatch" or "probe"
	PayloadHash string // the receipt's payload hash (probe evidence), if any
	// Unwritable (applied) lists the cells written as a marker because
	// Google Sheets cannot hold their value: recorded once, with the
	// applied transition (effect.value_unwritable), never retried.
	Unwritable []events.UnwritableField
	// Misdirected describes where a misdirected write landed
	// (OutcomeMisdirected only).
	Misdirected *Misdirected
}

// Troubled reports whether the outcome left the effect uncertain, failed
// or on the retry path.
func (o Outcome) Troubled() bool {
	return o.Kind == OutcomeUncertain || o.Kind == OutcomeFailed || o.Kind == OutcomeRetry || o.Kind == OutcomeMisdirected
}

// decideSettle records the outcome of the claim identified by token.
// Errors: ErrStaleClaim (the claim is not current: I04 post-ack bookkeeping
// of a displaced claim is rejected). A receipt for this effect id with
// another payload (I09) fails closed: terminal effect_payload_mismatch.
func decideSettle(e Effect, token string, o Outcome, now time.Time) (Decision, error) {
	if err := currentClaim(e, token); err != nil {
		return Decision{}, err
	}
	if o.PayloadHash != "" && o.PayloadHash != e.PayloadHash {
		o = Outcome{Kind: OutcomeFailed, Code: ErrEffectPayloadMismatch.Error(), Terminal: true, Via: o.Via}
	}
	switch o.Kind {
	case OutcomeApplied:
		return applied(e, token, o, now), nil
	case OutcomeUncertain:
		return transition(e, events.EffectUncertain{EffectID: e.ID, ClaimToken: token, Code: o.Code, ProbeAt: o.RetryAt.UTC()}, now), nil
	case OutcomeConflict:
		return transition(e, events.EffectConflict{EffectID: e.ID, ClaimToken: token, Code: o.Code, ObservedHash: o.WrittenHash}, now), nil
	case OutcomeRetry:
		return transition(e, events.EffectFailed{EffectID: e.ID, ClaimToken: token, Code: o.Code, RetryAt: o.RetryAt.UTC()}, now), nil
	}
	return transition(e, events.EffectFailed{EffectID: e.ID, ClaimToken: token, Code: o.Code, Terminal: true,
		ObservedHash: o.WrittenHash}, now), nil
}

// applied is the applied transition; a write that left markers in place
// of values Sheets cannot hold records them once, in the same decision.
func applied(e Effect, token string, o Outcome, now time.Time) Decision {
	d := transition(e, events.EffectApplied{EffectID: e.ID, ClaimToken: token, WrittenHash: o.WrittenHash, Via: o.Via}, now)
	if len(o.Unwritable) > 0 {
		d.Events = append(d.Events, events.New(d.Stream, events.EffectValueUnwritable{EffectID: e.ID, Tab: e.Target.Tab,
			Binding: e.Target.Binding, Entity: e.Entity, ID: e.EntityID, Fields: o.Unwritable}, now))
	}
	return d
}

func currentClaim(e Effect, token string) error {
	if (e.State != EffectProcessing && e.State != EffectUncertain) || e.ClaimToken != token {
		return fmt.Errorf("%w: %s (state %s)", ErrStaleClaim, e.ID, e.State)
	}
	return nil
}

// DecideProbeRescheduled records an inconclusive probe of an uncertain
// effect and its next due time; after maxProbes it fails terminally with
// TerminalUncertainTimeout (I08).
func DecideProbeRescheduled(e Effect, token string, maxProbes int64, next time.Time, now time.Time) (Decision, error) {
	if e.State != EffectUncertain || e.ClaimToken != token {
		return Decision{}, fmt.Errorf("%w: %s (state %s)", ErrStaleClaim, e.ID, e.State)
	}
	if e.Probes+1 >= maxProbes {
		return decideSettle(e, token, Outcome{Kind: OutcomeFailed, Code: TerminalUncertainTimeout, Terminal: true, Via: "probe"}, now)
	}
	return transition(e, events.EffectProbeScheduled{EffectID: e.ID, ClaimToken: token, Probes: e.Probes + 1, ProbeAt: next.UTC()}, now), nil
}

// DecideRecovered turns an effect a previous run left processing (claimed,
// maybe sent) into delivery_uncertain, its probe due at probeAt.
func DecideRecovered(e Effect, probeAt, now time.Time) (Decision, error) {
	return decideSettle(e, e.ClaimToken, Outcome{Kind: OutcomeUncertain, Code: "claimed_by_previous_run", RetryAt: probeAt}, now)
}

// decideBlocked settles a claimed acknowledge_system row reconcile whose
// guard (the candidate-time full-row visible hash) no longer matched: a
// person edited the row again, so the write was not made and the effect is
// blocked_candidate, never an overwrite (I13). Errors: ErrStaleClaim.
func decideBlocked(e Effect, token, code string, now time.Time) (Decision, error) {
	if err := currentClaim(e, token); err != nil {
		return Decision{}, err
	}
	if code == "" {
		code = "candidate_row_changed"
	}
	return transition(e, events.EffectBlocked{EffectID: e.ID, ClaimToken: token, Code: code}, now), nil
}

// DecideOutcome settles a claim: a guard failure of a row reconcile of
// acknowledge_system is blocked_candidate (reconcile true, I13); every
// other outcome is decideSettle's.
func DecideOutcome(e Effect, token string, o Outcome, reconcile bool, now time.Time) (Decision, error) {
	if o.Kind == OutcomeConflict && reconcile {
		return decideBlocked(e, token, o.Code, now)
	}
	return decideSettle(e, token, o, now)
}
