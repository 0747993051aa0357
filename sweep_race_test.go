//go:build race

package hikoutei

// underRace: the race detector is on. The pure-Go SQLite is ~15× slower
// under it, so the sweeps take a sample there (see sample); `make test`
// runs every case of them again in its race-free pass.
const underRace = true
