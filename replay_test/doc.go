// Package replaytest replays recorded logs: determinism, golden read models
// and upgrades of old logs.
package replaytest
