package hikoutei

import (
	"testing"
)

// BenchmarkGet reads one airport by primary key through the public API
// (read pool, projector.Select, the struct fill): what a per-row digest
// check costs a read.
//
//	go test -run '^$' -bench 'BenchmarkGet$' -benchmem -count 5 .
func BenchmarkGet(b *testing.B) {
	s := openStore(b, b.TempDir(), func(o *Options) { o.Logger = benchOptions().Logger })
	defer s.Close()
	loadAirports(b, s, 1000)
	all := readAirports(b)[:1000]
	b.ResetTimer()
	for i := range b.N {
		a, err := Get[Airport](ctx, s, all[i%len(all)].ID)
		if err != nil || a.ID != all[i%len(all)].ID {
			b.Fatal(a, err)
		}
	}
}
