// Package projector applies log events to the SQLite read model (entity
// tables, canonical and visible state, conflicts, quarantine, outbox) and
// moves its checkpoint in the same SQLite transaction.
package projector
