package hikoutei

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

func TestCommitThenReadFromSQLite(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	checked := time.Date(2024, 3, 10, 7, 0, 0, 123456789, time.UTC)
	commit(t, s, &Airport{ID: "1", Name: "Goroka Airport", Country: "Papua New Guinea", Lat: -6.081689834590001, Altitude: 5282, Checked: &checked, Active: true},
		&Airport{ID: "2", Name: "Egilssta\u00f0ir", Country: "Iceland", Altitude: 76},
		&Airport{ID: "3", Name: "Cafe\u0301", Country: "Iceland", Altitude: 10})
	a, err := Get[Airport](ctx, s, "1")
	mustT(t, err)
	if a.Name != "Goroka Airport" || a.Lat != -6.081689834590001 || a.Altitude != 5282 || !a.Active || !a.Checked.Equal(checked.Truncate(time.Millisecond)) {
		t.Fatalf("read back %+v", a)
	}
	got, err := Find[Airport](ctx, s, Where("country", "Iceland"), OrderByDesc("altitude"), Limit(1), Offset(1))
	mustT(t, err)
	if len(got) != 1 || got[0].ID != "3" || got[0].Name != "Café" || got[0].Checked != nil {
		t.Fatalf("find %+v", got)
	}
	if _, err := FindOne[Airport](ctx, s, Where("country", "Iceland")); !errors.Is(err, ErrNonUnique) {
		t.Fatalf("FindOne of two: %v", err)
	}
	if one, err := FindOne[Airport](ctx, s, Where("name", "Cafe\u0301")); err != nil || one.ID != "3" {
		t.Fatalf("FindOne by NFD name: %v %v", one, err)
	}
	if _, err := Get[Airport](ctx, s, "404"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := Find[Airport](ctx, s, Where("nope", 1)); !errors.Is(err, ErrUnknownField) {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestUnchangedEntityProducesNoEventAndFieldsKeepOwnRevisions(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	a := &Airport{ID: "1", Name: "Goroka", Altitude: 1}
	first := commit(t, s, a)
	if again := commit(t, s, a); again.Events != 0 || again.Commit != "" {
		t.Fatalf("unchanged entity committed %+v", again)
	}
	a.Altitude = 2
	commit(t, s, a)
	a.Altitude = 3
	last := commit(t, s, a)
	if first.Events != 1 || last.Events != 1 {
		t.Fatalf("results %+v %+v", first, last)
	}
	row := fieldState(t, s, "Airport", "1")
	if row.Fields["altitude"].Revision != 3 || row.Fields["name"].Revision != 1 || row.Fields["notes"].Owner != events.OwnerUser || row.Fields["name"].Owner != events.OwnerSystem {
		t.Fatalf("field state %+v", row.Fields)
	}
}

type Unregistered struct {
	ID string `hikoutei:"id,pk"`
}

func TestFailedValidationCommitsNothingOfTheUnit(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	head := func() uint64 { h, _ := s.e.Log().Head(); return h }
	before := head()
	cases := map[string]struct {
		persist []any
		want    error
	}{
		"NaN":          {[]any{&Airport{ID: "ok"}, &Airport{ID: "nan", Lat: math.NaN()}}, events.ErrNonFinite},
		"Inf":          {[]any{&Airport{ID: "ok"}, &Airport{ID: "inf", Lng: math.Inf(-1)}}, ErrInvalidValue},
		"unregistered": {[]any{&Airport{ID: "ok"}, &Unregistered{ID: "x"}}, ErrUnregisteredType},
		"not pointer":  {[]any{&Airport{ID: "ok"}, Airport{ID: "x"}}, ErrUnregisteredType},
		"empty key":    {[]any{&Airport{ID: "ok"}, &Airport{}}, ErrInvalidPrimaryKey},
		"edge space":   {[]any{&Airport{ID: "ok"}, &Airport{ID: " 00123"}}, ErrInvalidPrimaryKey},
		"bad utf8":     {[]any{&Airport{ID: "ok"}, &Airport{ID: "u", Name: "\xff"}}, events.ErrInvalidUTF8},
	}
	for name, c := range cases {
		u := s.Begin()
		for _, e := range c.persist {
			u.Persist(e)
		}
		if _, err := u.Commit(ctx); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
	if head() != before {
		t.Fatalf("a failed unit appended events (head %d → %d)", before, head())
	}
	if _, err := Get[Airport](ctx, s, "ok"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("part of a failed unit is readable: %v", err)
	}
}

func TestPrimaryKeyChangeIsRejected(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	commit(t, s, &Airport{ID: "1", Name: "Goroka"})
	u := s.Begin()
	a, err := Get[Airport](ctx, u, "1")
	mustT(t, err)
	a.ID = "2"
	if err := u.Persist(a); !errors.Is(err, ErrPrimaryKeyChanged) {
		t.Fatalf("persist after key change: %v", err)
	}
	if _, err := u.Commit(ctx); !errors.Is(err, ErrPrimaryKeyChanged) {
		t.Fatalf("commit: %v", err)
	}
	b := &Airport{ID: "3"}
	u2 := s.Begin()
	mustT(t, u2.Persist(b))
	b.ID = "4" // changed after Persist, before Commit
	if _, err := u2.Commit(ctx); !errors.Is(err, ErrPrimaryKeyChanged) {
		t.Fatalf("key changed before commit: %v", err)
	}
}

func TestRemoveAndRecreate(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	a := &Airport{ID: "1", Name: "Goroka"}
	commit(t, s, a)
	u := s.Begin()
	mustT(t, u.Remove(a))
	_, err := u.Commit(ctx)
	mustT(t, err)
	if _, err := Get[Airport](ctx, s, "1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after remove: %v", err)
	}
	u = s.Begin()
	u.Remove(a)
	if _, err := u.Commit(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove of a missing entity: %v", err)
	}
	commit(t, s, a)
	row := fieldState(t, s, "Airport", "1")
	if row.Fields["name"].Revision != 2 || row.Version != 3 {
		t.Fatalf("re-created state %+v", row)
	}
}

func TestConcurrentCommitsShareLogTransactions(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := s.Begin()
			u.Persist(&Airport{ID: "a" + string(rune('A'+i%26)) + string(rune('a'+i/26)), Name: "x"})
			_, err := u.Commit(ctx)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		mustT(t, err)
	}
	all, err := Find[Airport](ctx, s)
	mustT(t, err)
	st, err := s.Stats(ctx)
	mustT(t, err)
	if len(all) != 64 || st.Commits != 64 || st.LogTxns > 64 || st.LogTxns == 0 {
		t.Fatalf("rows %d stats %+v", len(all), st)
	}
	t.Logf("64 concurrent commits took %d log transactions", st.LogTxns)
}

func TestDeletedOrCorruptReadModelIsRebuiltFromTheLog(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func(string) error{
		"deleted": removeReadModel,
		"garbage": func(p string) error {
			removeReadModel(p)
			return os.WriteFile(p, []byte(strings.Repeat("not a database ", 500)), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			loadAirports(t, s, 500)
			mustT(t, s.Close())
			mustT(t, damage(filepath.Join(dir, ReadModelFile)))
			var last Progress
			s = openStore(t, dir, func(o *Options) { o.Progress = func(p Progress) { last = p } })
			rows, err := Find[Airport](ctx, s)
			mustT(t, err)
			live, n := digest(t, s.ReadModelPath()), checkpoint(t, s)
			mustT(t, s.Close())
			if len(rows) != 500 || last.Phase != "rebuild" || last.Done != last.Total || last.Total != n {
				t.Fatalf("rows %d progress %+v checkpoint %d", len(rows), last, n)
			}
			if replayDigest(t, dir, n) != live {
				t.Fatal("rebuilt read model differs from a replay of the same log")
			}
		})
	}
}

func TestReadModelFileIs0600AndSqlite3CLIReadsItWhileTheStoreRuns(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	defer s.Close()
	loadAirports(t, s, 100)
	st, err := os.Stat(s.ReadModelPath())
	mustT(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("read.sqlite mode %v", st.Mode().Perm())
	}
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 CLI not installed")
	}
	out, err := exec.Command("sqlite3", "-readonly", s.ReadModelPath(), `SELECT count(*), max(altitude) FROM "Airport";`).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "100|") {
		t.Fatalf("sqlite3: %s %v", out, err)
	}
}

func TestLocalOnlyStoreTouchesOnlyItsDirectory(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	commit(t, s, &Airport{ID: "1"})
	mustT(t, s.Close())
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "log.db,read.sqlite,snapshots" {
		t.Fatalf("store directory after close: %v", names)
	}
}
