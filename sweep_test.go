package hikoutei

// raceStride is the share of a sweep's cases run under the race detector:
// one in raceStride.
const raceStride = 5

// sample is every case of a sweep without the race detector, and every
// raceStride-th case (the first included) under it. The sample is fixed,
// so a failure under race reproduces.
func sample[T any](cases []T) []T {
	if !underRace {
		return cases
	}
	var out []T
	for i := 0; i < len(cases); i += raceStride {
		out = append(out, cases[i])
	}
	return out
}
