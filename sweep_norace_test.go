//go:build !race

package hikoutei

// underRace: the race detector is off; the sweeps run every case.
const underRace = false
