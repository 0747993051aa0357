package aggregates

import "errors"

// Sentinel errors of the aggregates package (stable snake_case codes).
var (
	// ErrEntityNotFound: a remove targets an entity that does not exist.
	ErrEntityNotFound = errors.New("entity_not_found")
	// ErrInvalidValue: a field value has no canonical form (NaN, ±Inf,
	// invalid UTF-8, out-of-range time); wraps the events canonical error.
	ErrInvalidValue = errors.New("invalid_field_value")
	// ErrInvalidCommand: a command lacks its entity name or id.
	ErrInvalidCommand = errors.New("invalid_command")
	// ErrEntityExists: a persist that may only create (Persist.CreateOnly:
	// an adoption's) found the entity already there; nothing of the unit
	// commits.
	ErrEntityExists = errors.New("entity_exists")
)

// Effect decision errors.
var (
	// ErrEffectNotClaimable: the effect is not pending, not due, or an
	// earlier stream_sequence of its target has not settled (I07).
	ErrEffectNotClaimable = errors.New("effect_not_claimable")
	// ErrStaleClaim: a settlement carried a claim token that is not the
	// effect's current one (post-ack bookkeeping of a displaced claim, I04).
	ErrStaleClaim = errors.New("effect_stale_claim")
	// ErrEffectPayloadMismatch: the same effect id was seen with another
	// payload hash; fail closed (I09).
	ErrEffectPayloadMismatch = errors.New("effect_payload_mismatch")
	// ErrNotSupersedable: only a terminal failed head may be superseded (I10).
	ErrNotSupersedable = errors.New("effect_not_supersedable")
)

// Conflict decision errors.
var (
	// ErrConflictOpen: an entity with an unresolved conflict cannot be
	// removed (I15); nothing of the unit commits.
	ErrConflictOpen = errors.New("entity_has_open_conflict")
	// ErrAckStale: acknowledge_system named a canonical revision, candidate
	// hash or epoch that is no longer current (I13).
	ErrAckStale = errors.New("acknowledge_stale")
	// ErrAckRejected: acknowledge_system targets a conflict that is not
	// open, or a legacy conflict without visible evidence (I14).
	ErrAckRejected = errors.New("acknowledge_rejected")
	// ErrConflictNotOpen: a resolution command targets a conflict that is
	// already resolved.
	ErrConflictNotOpen = errors.New("conflict_not_open")
	// ErrConflictStale: a resolution command's fence (canonical revision,
	// candidate hash, candidate epoch) is no longer current: an
	// application commit raised the field's revision, or the person typed
	// again (I13, I30).
	ErrConflictStale = errors.New("conflict_stale")
	// ErrConflictBlocked: no command can resolve the conflict as asked: a
	// legacy conflict without candidate visible evidence (I14), or
	// "use the sheet's value" for a candidate whose value the read model
	// does not hold (recorded before this build; rebuild the read model).
	ErrConflictBlocked = errors.New("conflict_blocked")
	// ErrCommandIDReused: a resolution command repeated a command id with
	// another payload (conflict, resolution or fence); nothing is recorded.
	ErrCommandIDReused = errors.New("command_id_reused")
)

// Quarantine decision errors.
var (
	// ErrQuarantineNotDismissable: the quarantine record is cleared, names
	// no row, or its entity was removed: there is nothing to rewrite.
	ErrQuarantineNotDismissable = errors.New("quarantine_not_dismissable")
)
