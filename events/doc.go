// Package events is the store's log: the event envelope, the typed event
// catalogue, canonical encoding and hashing, the append-only bbolt log and
// the writer lease that fences every append.
//
// Every event has a typed payload, one Go type per event type (Catalogue
// lists them; docs/events.md documents each, generated from this
// package). A payload is encoded as a canonical map (EncodeCanonical:
// NFC strings, UTC millisecond times, shortest floats, sorted keys), so
// equal values hash equal. Records are read back typed and upcast to
// their type's current schema; a record of a type or schema this build
// does not know, or with a payload of the wrong shape, is a *PayloadError,
// never skipped.
//
// Log.Append commits units of events in one bbolt transaction and one
// fsync, after checking inside that transaction that the caller holds the
// live writer lease (role, epoch, fencing token). A Writer opens a store
// directory for writing: it takes the lease (waiting out a dead holder by
// the takeover rule), keeps lease.toml while it holds it, renews the lease
// with a heartbeat, and releases it on Close.
//
// A damaged log.db is an error, never a panic: OpenLog checks the pages
// bbolt trusts before bbolt maps the file, every transaction turns a bbolt
// panic or memory fault into *LogCorruptError, VerifyLogFile checks the
// whole file and names every bad sequence, and SalvageLog copies every
// readable record into a new log.
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package events
