package hikoutei

import (
	"errors"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// Sentinel errors of the public API. Each has a stable snake_case code as
// its text; match with errors.Is. Errors of the layers below (events,
// projector) pass through wrapped and match their own sentinels.
var (
	// ErrInvalidEntity: an entity declaration is unusable (no or several
	// primary keys, a non-string key, an unsupported field type, a bad name).
	ErrInvalidEntity = errors.New("invalid_entity_definition")
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
	ErrUnknownField = errors.New("unknown_field")
	// ErrInvalidValue: a field value has no canonical form (NaN, ±Inf,
	// invalid UTF-8, a time outside years 1–9999).
	ErrInvalidValue = aggregates.ErrInvalidValue
	// ErrNotFound: Get or FindOne found nothing; Remove of a missing entity.
	ErrNotFound = aggregates.ErrEntityNotFound
	// ErrStoreClosed: the store was used after Close.
	ErrStoreClosed = errors.New("store_closed")
	// ErrUnitDone: a unit of work was used after Commit.
	ErrUnitDone = errors.New("unit_already_committed")
	// ErrReadModelBehind: the commit is durable in the log, but applying it
	// to read.sqlite failed; the store retries before the next commit and
	// on reopen. Reads may not show the commit until then.
	ErrReadModelBehind = errors.New("read_model_behind")
	// ErrNonUnique: FindOne matched more than one entity.
	ErrNonUnique = errors.New("entity_not_unique")
)
