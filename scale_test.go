//go:build !race

// Scale tests run without the race detector (`make test` runs them in a
// second, race-free pass): the pure-Go SQLite is ~15× slower under -race.
package hikoutei

import (
	"os"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

// TestScaleCitiesLoadAndRebuild loads all 171,075 GeoNames cities through
// the public API in units of 1,000, then checks that a rebuild of the read
// model from the log equals the live one (I23 at scale).
func TestScaleCitiesLoadAndRebuild(t *testing.T) {
	cities := readCities(t)
	dir := t.TempDir()
	if keep := os.Getenv(config.EnvKeepScaleDir); keep != "" {
		dir = keep
	}
	s, err := Open(t.Context(), dir, Options{}, Entity[City]("City"))
	mustT(t, err)
	start := time.Now()
	for i := 0; i < len(cities); i += 1000 {
		u := s.Begin()
		for j := i; j < min(i+1000, len(cities)); j++ {
			mustT(t, u.Persist(&cities[j]))
		}
		_, err := u.Commit(ctx)
		mustT(t, err)
	}
	load := time.Since(start)
	got, err := Find[City](ctx, s, Where("country", "AD"), OrderBy("name"))
	mustT(t, err)
	if len(got) == 0 || got[0].Admin1 == "" {
		t.Fatalf("Andorra cities: %+v", got)
	}
	live, n := digest(t, s.ReadModelPath()), checkpoint(t, s)
	mustT(t, s.Close())
	start = time.Now()
	target := t.TempDir() + "/rebuilt.sqlite"
	cp, err := Replay(t.Context(), dir, target, ReplayOptions{UpTo: n}, Entity[City]("City"))
	mustT(t, err)
	rebuild := time.Since(start)
	if cp != n || digest(t, target) != live {
		t.Fatalf("rebuilt read model differs from the live one (checkpoint %d/%d)", cp, n)
	}
	t.Logf("loaded %d cities in %v (%.0f rows/s); rebuilt %d events in %v (%.0f events/s)",
		len(cities), load, float64(len(cities))/load.Seconds(), n, rebuild, float64(n)/rebuild.Seconds())
	migrateCitiesAtScale(t, dir, cities[len(cities)/2])
}

// cityV2 is City renamed and extended: admin1 is now region (every old
// event is read through the rename), population is new.
type cityV2 struct {
	Key        string `hikoutei:"key,pk"`
	Name       string `hikoutei:"name"`
	Lat        string `hikoutei:"lat"`
	Lng        string `hikoutei:"lng"`
	Country    string `hikoutei:"country"`
	Region     string `hikoutei:"region,was=admin1"`
	Admin2     string `hikoutei:"admin2"`
	Population int64  `hikoutei:"population"`
}

// migrateCitiesAtScale reopens the store with cityV2: the read model
// migrates to it at rebuild speed, and a rebuild equals it (I35, I23).
func migrateCitiesAtScale(t *testing.T, dir string, sample City) {
	start := time.Now()
	s, err := Open(t.Context(), dir, Options{}, Entity[cityV2]("City"))
	mustT(t, err)
	migrate := time.Since(start)
	got, err := Get[cityV2](ctx, s, sample.Key)
	if err != nil || got.Region != sample.Admin1 || got.Name != sample.Name {
		t.Fatalf("city %s after the change: %+v %v", sample.Key, got, err)
	}
	live, n := digest(t, s.ReadModelPath()), checkpoint(t, s)
	mustT(t, s.Close())
	target := t.TempDir() + "/rebuilt.sqlite"
	if _, err := Replay(t.Context(), dir, target, ReplayOptions{UpTo: n}); err != nil || digest(t, target) != live {
		t.Fatalf("after the shape change, a rebuild differs from the live read model: %v", err)
	}
	t.Logf("a shape change (a rename, a new field) migrated the read model of %d events in %v (%.0f events/s)", n, migrate, float64(n)/migrate.Seconds())
}
