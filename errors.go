package hikoutei

import (
	"errors"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Sentinel errors of the public API. Each has a stable snake_case code as
// its text; match with errors.Is. Typed details (which stream, which
// holder) are in the errors of the events package, through errors.As.
var (
	// ErrInvalidEntity: an entity declaration is unusable (no or several
	// primary keys, a non-string key, an unsupported field type, a bad name).
	ErrInvalidEntity = engine.ErrInvalidEntity
	// ErrUnregisteredType: a value whose type was not declared at Open.
	ErrUnregisteredType = errors.New("entity_type_unregistered")
	// ErrInvalidPrimaryKey: a key is empty, has leading/trailing white space
	// or control characters, or is not valid UTF-8.
	ErrInvalidPrimaryKey = errors.New("invalid_primary_key")
	// ErrPrimaryKeyChanged: an entity loaded in a unit of work was persisted
	// with a different key. Keys are immutable; persist a new entity and
	// remove the old one instead.
	ErrPrimaryKeyChanged = errors.New("primary_key_changed")
	// ErrUnknownField: a query names a field the entity does not have.
	ErrUnknownField = projector.ErrUnknownField
	// ErrInvalidValue: a field value has no canonical form (NaN, ±Inf,
	// invalid UTF-8, a time outside years 1–9999).
	ErrInvalidValue = aggregates.ErrInvalidValue
	// ErrNotFound: Get or FindOne found nothing; Remove of a missing entity.
	ErrNotFound = aggregates.ErrEntityNotFound
	// ErrNonUnique: FindOne matched more than one entity.
	ErrNonUnique = errors.New("entity_not_unique")
	// ErrUnitDone: a unit of work was used after Commit.
	ErrUnitDone = errors.New("unit_already_committed")
	// ErrStoreClosed: the store was used after Close.
	ErrStoreClosed = engine.ErrStoreClosed
	// ErrReadModelBehind: the commit is durable in the log, but applying it
	// to read.sqlite failed; the store retries before the next commit and
	// on reopen. Reads may not show the commit until then.
	ErrReadModelBehind = engine.ErrReadModelBehind
	// ErrReadModelCorrupt: a read found a row of read.sqlite that does not
	// match its digest (damaged, or edited outside the store); no value of
	// it is returned (*projector.CorruptRowError names table and key). The
	// log is intact: stop the store and delete read.sqlite to rebuild it.
	ErrReadModelCorrupt = projector.ErrReadModelCorrupt
	// ErrStoreLocked: another process has the store open; the error names
	// the holder (*events.StoreLockedError).
	ErrStoreLocked = events.ErrStoreLocked
	// ErrLeaseHeld: a live writer holds the store's lease.
	ErrLeaseHeld = events.ErrLeaseHeld
	// ErrStaleWriterFence: this store's writer lease was taken over; its
	// commits are refused.
	ErrStaleWriterFence = events.ErrStaleWriterFence
	// ErrNotAStore: a directory that holds no store; nothing is created.
	ErrNotAStore = engine.ErrNotAStore
	// ErrSyncStartup: sync is configured but cannot start (no provider, an
	// invalid spreadsheet id or cadence, a NATS configuration error).
	ErrSyncStartup = engine.ErrSyncStartup
	// ErrConflictOpen: removing an entity that has an unresolved conflict
	// fails closed; nothing of the unit commits.
	ErrConflictOpen = aggregates.ErrConflictOpen
	// ErrConflictNotFound: no conflict has that id.
	ErrConflictNotFound = engine.ErrConflictNotFound
	// ErrAckStale: AcknowledgeSystem's fence (canonical revision, candidate
	// hash, candidate epoch) is no longer current.
	ErrAckStale = aggregates.ErrAckStale
	// ErrAckRejected: the conflict is not open, or is a legacy conflict
	// without candidate visible evidence.
	ErrAckRejected = aggregates.ErrAckRejected
	// ErrReplayGap: an event source skipped a sequence.
	ErrReplayGap = engine.ErrReplayGap
	// ErrReplayTarget: a replay target already holds a read model.
	ErrReplayTarget = engine.ErrReplayTarget
	// ErrInvalidInterval: an interval variable (polling, full scan, rate
	// limit) is not a plain positive decimal integer of milliseconds; it
	// comes wrapped in ErrSyncStartup.
	ErrInvalidInterval = config.ErrInvalidInterval
)
