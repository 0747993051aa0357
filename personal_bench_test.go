package hikoutei

import (
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
