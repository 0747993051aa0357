// Package hikoutei is an embedded, event-sourced store: an application's
// typed records live in a local, fenced, append-only log (bbolt), are
// projected into a SQLite read model the application reads, and are
// materialised asynchronously into Google Sheets, where people look and edit.
//
// The building blocks are in sub-packages: events (canonical encoding, the
// fenced log, the writer lease and lease.toml), aggregates (pure decisions),
// projector (the SQLite read model), effects (the sync workers), sheetsio
// (the Sheets provider and emulator) and snapshots. See README.md.
package hikoutei
