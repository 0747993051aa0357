package hikoutei

import (
	"path/filepath"
	"strconv"
	"testing"
)

// personPlain is Person without personal fields: the baseline of the
// sealing benchmarks.
type personPlain struct {
	ID    string  `hikoutei:"id,pk"`
	Name  string  `hikoutei:"name"`
	Email *string `hikoutei:"email"`
	City  string  `hikoutei:"city"`
}

// BenchmarkPersonalCommit is the cost of sealing personal fields on the
// durable commit path. new: every commit is a new subject (its key is
// stored, one more fsync, in keys.db); update: the subjects exist (their
// records change, the keys are there). Compare personal with plain:
//
//	go test -run '^$' -bench PersonalCommit -benchtime 2s .
func BenchmarkPersonalCommit(b *testing.B) {
	for _, personal := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "personal"}[personal]
		for _, mode := range []string{"new", "update"} {
			b.Run(name+"/"+mode, func(b *testing.B) { benchPersonalCommit(b, personal, mode == "new") })
		}
	}
}

func benchPersonalCommit(b *testing.B, personal, fresh bool) {
	def := Entity[personPlain]("Person")
	if personal {
		def = Entity[Person]("Person")
	}
	s, err := Open(b.Context(), b.TempDir(), Options{NoAdmin: true}, def)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const subjects = 100
	rec := func(i int) any {
		id, email := "p-"+strconv.Itoa(i%subjects), "someone."+strconv.Itoa(i)+"@example.invalid"
		if fresh {
			id = "p-" + strconv.Itoa(i)
		}
		if personal {
			return &Person{ID: id, Name: "Name " + strconv.Itoa(i), Email: &email, City: "Lyon"}
		}
		return &personPlain{ID: id, Name: "Name " + strconv.Itoa(i), Email: &email, City: "Lyon"}
	}
	if !fresh {
		for i := range subjects {
			commitBench(b, s, rec(i))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		commitBench(b, s, rec(i+subjects))
	}
}

func commitBench(b *testing.B, s *Store, v any) {
	u := s.Begin()
	if err := u.Persist(v); err != nil {
		b.Fatal(err)
	}
	if _, err := u.Commit(b.Context()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPersonalRebuild is the cost of personal fields when the read
// model is rebuilt from the log (Replay of 2,000 records into a new
// read.sqlite: the sealed text is stored as it is, so the cost is its
// size) and when every record is read back (Find of the 2,000: each
// personal value opened). Compare personal with plain:
//
//	go test -run '^$' -bench PersonalRebuild -benchtime 20x .
func BenchmarkPersonalRebuild(b *testing.B) {
	for _, personal := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "personal"}[personal]
		b.Run(name+"/replay", func(b *testing.B) { benchPersonalReplay(b, personal) })
		b.Run(name+"/find-all", func(b *testing.B) { benchPersonalFindAll(b, personal) })
	}
}

const rebuildRecords = 2000

// personalStore is a closed store of rebuildRecords people, committed 100
// per unit, and its entity definition.
func personalStore(b *testing.B, personal bool) (string, EntityDef) {
	def := Entity[personPlain]("Person")
	if personal {
		def = Entity[Person]("Person")
	}
	dir := b.TempDir()
	s, err := Open(b.Context(), dir, Options{NoAdmin: true}, def)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < rebuildRecords; i += 100 {
		u := s.Begin()
		for j := i; j < i+100; j++ {
			id, name, email := "p-"+strconv.Itoa(j), "Name "+strconv.Itoa(j), "someone."+strconv.Itoa(j)+"@example.invalid"
			var v any = &personPlain{ID: id, Name: name, Email: &email, City: "Lyon"}
			if personal {
				v = &Person{ID: id, Name: name, Email: &email, City: "Lyon"}
			}
			if err := u.Persist(v); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := u.Commit(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return dir, def
}

func benchPersonalReplay(b *testing.B, personal bool) {
	dir, def := personalStore(b, personal)
	target := filepath.Join(b.TempDir(), "rebuilt.sqlite")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := Replay(b.Context(), dir, target, ReplayOptions{Force: true}, def); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rebuildRecords), "ns/record")
}

func benchPersonalFindAll(b *testing.B, personal bool) {
	dir, def := personalStore(b, personal)
	s, err := Open(b.Context(), dir, Options{NoAdmin: true}, def)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n, err := findAllPeople(b, s, personal)
		if err != nil || n != rebuildRecords {
			b.Fatalf("found %d: %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rebuildRecords), "ns/record")
}

func findAllPeople(b *testing.B, s *Store, personal bool) (int, error) {
	if personal {
		all, err := Find[Person](b.Context(), s, Limit(0))
		return len(all), err
	}
	all, err := Find[personPlain](b.Context(), s, Limit(0))
	return len(all), err
}
