package events

import "time"

// Effect events: the outbox. effect.queued goes to the target row's
// outbox stream ("outbox/<binding>", whose version is the effect's
// stream_sequence); every later transition goes to the effect's own
// stream ("effect/<effect_id>").
const (
	TypeEffectQueued         Type = "effect.queued"
	TypeEffectClaimed        Type = "effect.claimed"
	TypeEffectApplied        Type = "effect.applied"
	TypeEffectFailed         Type = "effect.failed"
	TypeEffectUncertain      Type = "effect.delivery_uncertain"
	TypeEffectProbeScheduled Type = "effect.probe_scheduled"
	TypeEffectSuperseded     Type = "effect.superseded"
	TypeEffectConflict       Type = "effect.conflict"
	TypeEffectBlocked        Type = "effect.blocked_candidate"
	TypeEffectUnwritable     Type = "effect.value_unwritable"
	TypeEffectCoalesced      Type = "effect.coalesced"
)

// OutboxStream is the stream of a target row's queued effects.
func OutboxStream(binding string) string { return "outbox/" + binding }

// EffectStream is the stream of one effect's transitions.
func EffectStream(id string) string { return "effect/" + id }

// Op is what an effect does to its row.
type Op string

// Ops.
const (
	OpAppend Op = "append"
	OpUpdate Op = "update"
	OpDelete Op = "delete"
)

// EffectQueued records an effect: one row write to a spreadsheet, queued
// in the same commit as the change that caused it.
type EffectQueued struct {
	// EffectID is deterministic: the same binding and stream_sequence
	// always give the same id.
	EffectID string `canon:"effect_id,required"`
	// Spreadsheet is the sync target's name (not the Google id).
	Spreadsheet string `canon:"spreadsheet"`
	// Tab is the logical tab name, e.g. "Airport_System".
	Tab string `canon:"tab"`
	// Anchor is the row's anchor (the entity's primary key).
	Anchor string `canon:"anchor"`
	// Binding identifies the row: a stable hash of tab and anchor.
	Binding string `canon:"binding,required"`
	// StreamSequence is the effect's place among the row's effects; one is
	// claimed only after every earlier one settled.
	StreamSequence uint64 `canon:"stream_sequence"`
	// Op is append, update or delete.
	Op Op `canon:"op"`
	// Values holds the cells to write by column (null for a delete).
	Values map[string]any `canon:"values"`
	// PayloadHash covers op, tab, anchor and values: a retry with the same
	// id and another payload fails closed.
	PayloadHash string `canon:"payload_hash"`
	// Entity and ID name the entity the row shows.
	Entity string `canon:"entity"`
	ID     string `canon:"id"`
	// ExpectedHash, when set, is the full-row hash the write is guarded by
	// instead of the row's last visible hash (a correction, a reconcile).
	ExpectedHash string `canon:"expected_hash,omitempty"`
	// ValuesOf, when set (schema 2), is the version of the entity's stream
	// whose entity.persisted, earlier in the same commit, holds Values:
	// the record then stores no values, and reading the log fills them in
	// (its fields, plus KeyColumn holding ID when KeyColumn is set).
	ValuesOf uint64 `canon:"values_of,omitempty"`
	// KeyColumn is the primary key's column of a row ValuesOf fills in.
	KeyColumn string `canon:"key_column,omitempty"`
}

// stored is the form a record keeps: no values when they are the
// persisted fields' (ValuesOf).
func (q EffectQueued) stored() Payload {
	if q.ValuesOf != 0 {
		q.Values = nil
	}
	return q
}

func (q EffectQueued) holdsLeftOut() bool { return q.ValuesOf != 0 && q.Values != nil }

// ValuesFrom returns the values q refers to in p, the entity.persisted of
// its entity at version q.ValuesOf: p's fields, plus KeyColumn holding ID.
func (q EffectQueued) ValuesFrom(p EntityPersisted) map[string]any {
	out := make(map[string]any, len(p.Fields)+1)
	for k, v := range p.Fields {
		out[k] = v
	}
	if q.KeyColumn != "" {
		out[q.KeyColumn] = q.ID
	}
	return out
}

// EffectCoalesced records that a later change of the row was merged into
// this effect while it was still pending and never claimed: the effect now
// writes Op with Values (the row's newest desired state), and no effect
// was queued for the later change. No receipt can carry the effect's
// earlier payload hash, since it was never sent.
type EffectCoalesced struct {
	// EffectID is the effect this transition belongs to.
	EffectID string `canon:"effect_id,required"`
	// Op is what the effect now does: append, update or delete.
	Op Op `canon:"op"`
	// Values holds the cells the effect now writes (null for a delete).
	Values map[string]any `canon:"values"`
	// PayloadHash covers op, tab, anchor and values as for effect.queued.
	PayloadHash string `canon:"payload_hash"`
}

// EffectClaimed records a claim of an effect for one dispatch.
type EffectClaimed struct {
	// EffectID is the effect this transition belongs to.
	EffectID string `canon:"effect_id,required"`
	// ClaimToken identifies this claim; only its holder may settle it.
	ClaimToken string `canon:"claim_token"`
	// Attempt counts the claims of the effect, this one included.
	Attempt int64 `canon:"attempt"`
	// Epoch is the writer lease epoch that claimed it.
	Epoch int64 `canon:"epoch"`
}

// EffectApplied records that the write landed (a receipt proves it).
type EffectApplied struct {
	// EffectID is the effect this transition belongs to.
	EffectID string `canon:"effect_id,required"`
	// ClaimToken is the claim the outcome settles.
	ClaimToken string `canon:"claim_token"`
	// WrittenHash is the row's full visible hash after the write.
	WrittenHash string `canon:"written_hash"`
	// Via is how it was learned: "dispatch" or "probe".
	Via string `canon:"via"`
}

// EffectFailed records a failed dispatch: recoverable (back on the retry
// path at RetryAt) or terminal (never claimable again; reconciliation
// supersedes it).
type EffectFailed struct {
	// EffectID is the effect this transition belongs to.
	EffectID string `canon:"effect_id,required"`
	// ClaimToken is the claim the outcome settles.
	ClaimToken string `canon:"claim_token"`
	// Code is the stable reason.
	Code string `canon:"code"`
	// Terminal marks a failure that is never retried.
	Terminal bool `canon:"terminal"`
	// RetryAt is when a recoverable failure becomes claimable (null when terminal).
	RetryAt time.Time `canon:"retry_at"`
	// ObservedHash is the row hash a failed guard found (correction evidence).
	ObservedHash string `canon:"observed_hash,omitempty"`
}

// EffectUncertain records a write whose outcome is unknown (a timeout, a
// lost response): only a due probe decides it.
type EffectUncertain struct {
	// EffectID is the effect this transition belongs to.
	EffectID string `canon:"effect_id,required"`
	// ClaimToken is the claim whose outcome is unknown.
	ClaimToken string `canon:"claim_token"`
	// Code is the stable reason the outcome is unknown.
	Code string `canon:"code"`
	// ProbeAt is when the probe is due.
	ProbeAt time.Time `canon:"probe_at"`
}

// EffectProbeScheduled records an inconclusive probe and the next one.
type EffectProbeScheduled struct {
	// EffectID is the effect this transition belongs to.
	EffectID string `canon:"effect_id,required"`
	// ClaimToken is the claim being probed.
	ClaimToken string `canon:"claim_token"`
	// Probes counts the probes since the claim.
	Probes int64 `canon:"probes"`
	// ProbeAt is when the next probe is due.
	ProbeAt time.Time `canon:"probe_at"`
}

// EffectSuperseded records that reconciliation replaced a terminal failed
// effect by a correction queued in the same commit.
type EffectSuperseded struct {
	// EffectID is the effect this transition belongs to.
	EffectID string `canon:"effect_id,required"`
	// By is the replacement effect's id ("" when the row needs no write).
	By string `canon:"by"`
}

// EffectConflict records a guarded write to an Input row that found the
// row edited by a person: nothing was written.
type EffectConflict struct {
	// EffectID is the effect this transition belongs to.
	EffectID string `canon:"effect_id,required"`
	// ClaimToken is the claim the outcome settles.
	ClaimToken string `canon:"claim_token"`
	// Code is the stable reason.
	Code string `canon:"code"`
	// ObservedHash is the full-row hash the guard found instead.
	ObservedHash string `canon:"observed_hash"`
}

// EffectBlocked records a row reconcile of acknowledge_system whose guard
// (the candidate-time row hash) no longer matched: a person edited the row
// again, so nothing was overwritten.
type EffectBlocked struct {
	// EffectID is the effect this transition belongs to.
	EffectID string `canon:"effect_id,required"`
	// ClaimToken is the claim the outcome settles.
	ClaimToken string `canon:"claim_token"`
	// Code is the stable reason (candidate_row_changed by default).
	Code string `canon:"code"`
}

// EffectValueUnwritable records, once per applied effect, the values of
// its row Google Sheets cannot hold (a text over 50,000 characters, …):
// the write landed with a marker in each such cell instead, the rest of
// the row as queued. It follows the effect.applied it belongs to, in the
// same commit. Nothing retries the value: only a later write of the field
// (a new value) replaces the marker. It never carries the value.
type EffectValueUnwritable struct {
	// EffectID is the applied effect this belongs to.
	EffectID string `canon:"effect_id,required"`
	// Tab is the logical tab written, e.g. "Airport_System".
	Tab string `canon:"tab"`
	// Binding identifies the row: a stable hash of tab and anchor.
	Binding string `canon:"binding"`
	// Entity and ID name the entity the row shows.
	Entity string `canon:"entity"`
	ID     string `canon:"id"`
	// Fields lists the cells written as markers, by column name.
	Fields []UnwritableField `canon:"fields"`
}

// UnwritableField is one cell written as a marker.
type UnwritableField struct {
	// Field is the column (the entity's field name).
	Field string `canon:"field"`
	// Reason is why: value_too_large, value_not_finite, value_out_of_range
	// or value_unsupported.
	Reason string `canon:"reason"`
	// Chars is the value's length in characters for value_too_large, else 0.
	Chars int64 `canon:"chars"`
}

// EventType implements Payload.
func (EffectQueued) EventType() Type { return TypeEffectQueued }

// EventType implements Payload.
func (EffectCoalesced) EventType() Type { return TypeEffectCoalesced }

// EventType implements Payload.
func (EffectClaimed) EventType() Type { return TypeEffectClaimed }

// EventType implements Payload.
func (EffectApplied) EventType() Type { return TypeEffectApplied }

// EventType implements Payload.
func (EffectFailed) EventType() Type { return TypeEffectFailed }

// EventType implements Payload.
func (EffectUncertain) EventType() Type { return TypeEffectUncertain }

// EventType implements Payload.
func (EffectProbeScheduled) EventType() Type { return TypeEffectProbeScheduled }

// EventType implements Payload.
func (EffectSuperseded) EventType() Type { return TypeEffectSuperseded }

// EventType implements Payload.
func (EffectConflict) EventType() Type { return TypeEffectConflict }

// EventType implements Payload.
func (EffectBlocked) EventType() Type { return TypeEffectBlocked }

// EventType implements Payload.
func (EffectValueUnwritable) EventType() Type { return TypeEffectUnwritable }

func init() {
	register[EffectQueued](3, "outbox/<binding>", upcast{from: 1, fn: queuedV1}, upcast{from: 2, fn: queuedV2})
	expandWith(TypeEffectQueued, expandQueued)
	register[EffectClaimed](1, effectStreamPattern)
	register[EffectApplied](1, effectStreamPattern)
	register[EffectFailed](1, effectStreamPattern)
	register[EffectUncertain](1, effectStreamPattern)
	register[EffectProbeScheduled](1, effectStreamPattern)
	register[EffectSuperseded](1, effectStreamPattern)
	register[EffectConflict](1, effectStreamPattern)
	register[EffectBlocked](1, effectStreamPattern)
	register[EffectValueUnwritable](1, effectStreamPattern)
	register[EffectCoalesced](1, effectStreamPattern)
}

const effectStreamPattern = "effect/<effect_id>"

// queuedV1 upcasts effect.queued schema 1 (values always inline) to 2,
// whose values_of and key_column are absent when the values are inline:
// the payload is unchanged.
func queuedV1(m map[string]any) (map[string]any, error) { return m, nil }

// queuedV2 upcasts effect.queued schema 2 to 3, whose records leave out
// effect_id, anchor and payload_hash when they equal their derivation: a
// schema-2 record always holds them, so the payload is unchanged.
func queuedV2(m map[string]any) (map[string]any, error) { return m, nil }
