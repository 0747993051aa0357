// Package replaytest replays recorded logs: golden read models,
// determinism, upgrades of old logs (upcasting) and damaged logs.
//
// testdata/logs/<name>/log.db are committed logs made by the generator in
// gen_test.go; the tests replay these files with hikoutei.Replay and
// compare projector.Dump of the result with testdata/golden/<name>.txt.
//
//	go test ./replay_test/                                   # replay + compare
//	go test ./replay_test/ -run TestGolden -update           # rewrite the goldens
//	go test ./replay_test/ -run TestGenerateLogs -generate   # rewrite the logs (then -update)
//
// A golden changes whenever the read model's shape changes (a new hk_
// table or column in projector/migrations.go): review the diff, then
// rewrite with -update. A log is regenerated only when its recorded
// history must change; the tests never regenerate it, and never write to
// testdata/logs.
//
// # The unknown record of schema_v1
//
// testdata/logs/schema_v1/log.db holds one record (seq 7, stream
// "audit/1", version 1, schema 1, payload {text}) of type "audit.note", a
// type no build ever defined. An unknown event type is a typed error,
// never silently skipped, so that log as recorded does not replay:
// hikoutei.Replay, events.Log.ReadFrom and hikoutei.Open fail at that
// record with *events.PayloadError (Seq 7, Type "audit.note") wrapping
// events.ErrUnknownEventType (TestSchemaV1UnknownEventTypeFailsReplay).
//
// To keep checking everything else that log holds, the golden,
// determinism, damage, live-store (I23) and generator tests replay a copy
// of it in t.TempDir() (replayableCopy) in which that single record is
// rewritten through bbolt into an events.SchemaDeclared with no entities,
// re-encoded with events.MarshalRecord (valid checksum), with the same
// seq, stream, version, at, epoch, token and commit. schema.declared is
// the catalogue event the projector projects to nothing
// (projector.applyEntity), and declared shapes are read from the schema
// stream only (this one stays on "audit/1"), so the rewrite has no
// read-model effect: the copy reproduces golden/schema_v1.txt, which was
// recorded by a build that skipped the unknown type. Every other record
// stays byte for byte as recorded, and the committed file is never
// modified. The generator keeps writing the audit.note record (as
// events.Recorded); TestGeneratorReproducesCommittedLogs rewrites it the
// same way before replaying.
//
// TestCommittedRecordsRoundTripThroughTheCatalogue pins that every other
// record decodes into its catalogue type and re-encodes to its stored
// bytes, except the schema-1 records that are upcast on read (documented
// there).
package replaytest
