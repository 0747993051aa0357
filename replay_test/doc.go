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
//	go test ./replay_test/ -run KnownBug -knownbugs -v       # tests of known, unfixed bugs
//
// A golden changes whenever the read model's shape changes (a new hk_
// table or column in projector/migrations.go): review the diff, then
// rewrite with -update. A log is regenerated only when its recorded
// history must change; the tests never regenerate it.
package replaytest
