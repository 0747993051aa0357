package hikoutei

import (
	"testing"
)

// BenchmarkVerify: VerifyDir of the whole log (`hikoutei audit verify`),
// the log built once outside the timer as BenchmarkRebuild builds it
// (HIKOUTEI_BENCH_DATA=cities: the 171,075 cities). One op = one full walk
// of the chain; events/s counts every record verified.
func BenchmarkVerify(b *testing.B) {
	dir, _, head := buildRebuildLog(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := VerifyDir(b.Context(), dir, VerifyOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Head != head || rep.FirstChained != 1 {
			b.Fatalf("verified to %d (first chained %d), log head is %d", rep.Head, rep.FirstChained, head)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(head)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
