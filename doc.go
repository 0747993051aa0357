// Package hikoutei is an embedded, event-sourced store for an
// application's typed records, which it materialises into a Google
// spreadsheet where people look and edit.
//
// # The store
//
// Open a directory with the entity types the application declares:
//
//	type Airport struct {
//		IATA  string `hikoutei:"iata,pk"`     // one string primary key
//		Name  string `hikoutei:"name"`
//		Notes string `hikoutei:"notes,user"`  // people may edit it in the sheet
//	}
//	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{}, hikoutei.Entity[Airport]("Airport"))
//
// Changes are made in a unit of work (Store.Begin, Unit.Persist,
// Unit.Remove, Unit.Commit): a commit is appended to a fenced, append-only
// log (log.db, bbolt) in one transaction and one fsync — that is its
// success boundary — and applied to a SQLite read model (read.sqlite) that
// Get, Find and FindOne read, and that any SQLite tool can read while the
// store runs. The log is the truth: the read model is rebuilt from it
// (Replay) whenever it is missing or unusable, and equals a rebuild.
// Concurrent commits share log transactions. One process writes a store
// at a time: it holds a writer lease whose epoch and fencing token every
// append carries.
//
// # Sync
//
// With Options.Sync, each commit also queues, in the same log
// transaction, the effects that show it in the spreadsheet: a System tab
// per entity (what the application holds) and an Input tab for the fields
// people may edit. Workers deliver the effects asynchronously, in order
// per row, guarded by what the row showed, with receipts that prove a
// write landed; a commit never waits on the spreadsheet. Pollers read the
// Input tabs back: an edit over what the sheet showed becomes a committed
// change; a value that cannot be read (text in a number column, a
// formula) is quarantined; a person's value against a system change of the
// same field opens a Conflict, which a later commit of the field resolves
// (the system wins) or AcknowledgeSystem resolves on a person's behalf.
// gsync.SyncFromEnv builds the options from the environment (package gsync
// links the Google Sheets client; a program that never syncs does not).
//
// # Operating it
//
// Health says whether the store can commit and whether sync runs; Stats
// counts commits, events and effects. The hikoutei command (cmd/hikoutei)
// serves a store, shows its status, audits and replays its log, and runs
// the demo. Package hikouteitest drives sync by hand in tests, against an
// in-process emulator of the Sheets API.
//
// Errors carry stable snake_case codes: match them with errors.Is against
// the Err variables of this package.
package hikoutei
