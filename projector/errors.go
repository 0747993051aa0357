package projector

import "errors"

// Sentinel errors of the projector package (stable snake_case codes).
var (
	// ErrReadModelInvalid: read.sqlite is unreadable, corrupt, belongs to
	// another store, is ahead of the log, or was built for other entity
	// schemas. The store answers by rebuilding it from the log.
	ErrReadModelInvalid = errors.New("read_model_invalid")
	// ErrReadModelShape: read.sqlite was built for other entity shapes
	// (an entity's table changed, or an entity is no longer declared).
	// It always comes with ErrReadModelInvalid; after a recorded shape
	// change it is expected, and the store rebuilds the read model
	// without keeping the old one.
	ErrReadModelShape = errors.New("read_model_shape_changed")
	// ErrInvalidSchema: an entity or column name is not a plain identifier,
	// is reserved (hk_, sqlite_), or is declared twice.
	ErrInvalidSchema = errors.New("invalid_read_model_schema")
	// ErrProjection: applying an event to SQLite failed; nothing of that
	// batch was applied and the checkpoint did not move.
	ErrProjection = errors.New("projection_failed")
	// ErrReadModelCorrupt: a row of read.sqlite does not match its digest
	// (bytes changed inside it, or an UPDATE outside the store), or the
	// read model differs from a rebuild from the log. No value of it is
	// returned; rebuild the read model from the log (*CorruptRowError
	// names the table and key).
	ErrReadModelCorrupt = errors.New("read_model_corrupt")
	// ErrUnknownField: a query names a field the entity does not have.
	ErrUnknownField = errors.New("unknown_field")
	// ErrInvalidQuery: a query condition cannot be built (an unknown
	// operator, a prefix that is not text, an ordering comparison with
	// NULL).
	ErrInvalidQuery = errors.New("invalid_query")
	// ErrOutboxEntryNotFound: no outbox entry has the effect id asked for.
	ErrOutboxEntryNotFound = errors.New("outbox_entry_not_found")
	// ErrQuarantineEntryNotFound: no quarantine record has the id asked for.
	ErrQuarantineEntryNotFound = errors.New("quarantine_entry_not_found")
)
