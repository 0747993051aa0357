package hikoutei

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// River is the second entity type of the time-travel tests.
type River struct {
	ID     string  `hikoutei:"id,pk"`
	Name   string  `hikoutei:"name"`
	Length int64   `hikoutei:"length"`
	Basin  *string `hikoutei:"basin"`
}

func asofEntities() []EntityDef {
	return []EntityDef{Entity[Airport]("Airport"), Entity[River]("River")}
}

// openAsOfStore opens a store of airports and rivers on a manual clock
// that keeps every snapshot taken.
func openAsOfStore(t *testing.T, dir string, clock *events.ManualClock) *Store {
	t.Helper()
	o := Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, SnapshotKeep: 1000, Logger: slog.New(slog.DiscardHandler)}
	s, err := Open(t.Context(), dir, o, asofEntities()...)
	mustT(t, err)
	return s
}

// history generates a random history: units of puts (new and updated)
// and removes of airports and rivers, the clock moving forward between
// them, and snapshots taken at random points.
type history struct {
	rng      *rand.Rand
	s        *Store
	clock    *events.ManualClock
	airports map[string]bool // live ids
	rivers   map[string]bool
	ids      map[string][]string // every id ever used, by entity
	touched  map[string]bool     // entity/id of the unit being built
	snaps    int
}

func (h *history) run(t *testing.T, units int) {
	t.Helper()
	for range units {
		h.clock.Advance(time.Duration(1+h.rng.Intn(5000)) * time.Millisecond)
		u := h.s.Begin()
		h.touched = map[string]bool{}
		for range 1 + h.rng.Intn(4) {
			mustT(t, h.op(u))
		}
		_, err := u.Commit(ctx)
		mustT(t, err)
		if h.rng.Intn(6) == 0 {
			_, err := h.s.Snapshot(ctx)
			mustT(t, err)
			h.snaps++
		}
	}
}

// op adds one random operation to u; an entity appears at most once
// per unit (the last op on it would win anyway).
func (h *history) op(u *Unit) error {
	if h.rng.Intn(2) == 0 {
		return h.airportOp(u)
	}
	return h.riverOp(u)
}

// pick returns a random id of entity, whether it exists, and whether
// the unit being built already touched it (then it is left alone).
func (h *history) pick(live map[string]bool, entity string, prefix string) (string, bool, bool) {
	id := fmt.Sprintf("%s%d", prefix, h.rng.Intn(12))
	if !contains(h.ids[entity], id) {
		h.ids[entity] = append(h.ids[entity], id)
	}
	touched := h.touched[entity+"/"+id]
	h.touched[entity+"/"+id] = true
	return id, live[id], touched
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func (h *history) airportOp(u *Unit) error {
	id, live, touched := h.pick(h.airports, "Airport", "A")
	if touched {
		return nil
	}
	a := &Airport{ID: id, Name: fmt.Sprintf("airport %d", h.rng.Intn(1000)), Altitude: int64(h.rng.Intn(9000)),
		Lat: h.rng.Float64()*180 - 90, Active: h.rng.Intn(2) == 0}
	if h.rng.Intn(3) == 0 {
		c := t0.Add(time.Duration(h.rng.Intn(1e6)) * time.Second)
		a.Checked = &c
	}
	if live && h.rng.Intn(3) == 0 {
		delete(h.airports, id)
		return u.Remove(a)
	}
	h.airports[id] = true
	return u.Persist(a)
}

func (h *history) riverOp(u *Unit) error {
	id, live, touched := h.pick(h.rivers, "River", "R")
	if touched {
		return nil
	}
	r := &River{ID: id, Name: fmt.Sprintf("river %d", h.rng.Intn(1000)), Length: int64(h.rng.Intn(7000))}
	if h.rng.Intn(2) == 0 {
		b := fmt.Sprintf("basin %d", h.rng.Intn(5))
		r.Basin = &b
	}
	if live && h.rng.Intn(3) == 0 {
		delete(h.rivers, id)
		return u.Remove(r)
	}
	h.rivers[id] = true
	return u.Persist(r)
}

// truncatedRebuild copies the records 1..seq of the store's log into a new
// log with the same store id (through the events package's replica API,
// which keeps every record as it was) and rebuilds a read model from
// that copy. It returns the rebuilt read model's path.
func truncatedRebuild(t *testing.T, s *Store, seq uint64) string {
	t.Helper()
	dir := t.TempDir()
	src := s.e.Log()
	dst, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{StoreID: src.StoreID()})
	mustT(t, err)
	var records [][]byte
	err = src.ReadFrom(1, func(e events.Event) error {
		if e.Seq > seq {
			return errStop
		}
		rec, err := events.ReplicaRecord(e)
		records = append(records, rec)
		return err
	})
	if !errors.Is(err, errStop) && err != nil {
		t.Fatal(err)
	}
	mustT(t, dst.ApplyReplica(1, records))
	mustT(t, dst.Close())
	cp, _, err := RebuildReadModel(t.Context(), dir, ReplayOptions{}, asofEntities()...)
	mustT(t, err)
	if cp != seq {
		t.Fatalf("the truncated rebuild reached %d, want %d", cp, seq)
	}
	return filepath.Join(dir, ReadModelFile)
}

var errStop = errors.New("stop")

// TestAsOfEqualsARebuildOfTheLogTruncatedThere: for random histories of
// puts and removes of two entity types with snapshots taken at random
// points, the view AsOf builds at a random sequence holds exactly what a
// rebuild of a copy of the log truncated at that sequence holds: every
// entity of every type (and the whole read model's digest).
func TestAsOfEqualsARebuildOfTheLogTruncatedThere(t *testing.T) {
	t.Parallel()
	var fromSnapshot atomic.Int64
	t.Run("seeds", func(t *testing.T) {
		for _, seed := range sample([]int64{1, 13, 2, 3, 5, 8}) {
			t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
				t.Parallel()
				clock := events.NewManualClock(t0)
				h := &history{rng: rand.New(rand.NewSource(seed)), clock: clock, airports: map[string]bool{}, rivers: map[string]bool{},
					ids: map[string][]string{}}
				h.s = openAsOfStore(t, t.TempDir(), clock)
				defer h.s.Close()
				h.run(t, 40)
				head := checkpoint(t, h.s)
				seqs := []uint64{1, head}
				for range 5 {
					seqs = append(seqs, 1+uint64(h.rng.Int63n(int64(head))))
				}
				for _, seq := range seqs {
					if checkAsOf(t, h, seq) {
						fromSnapshot.Add(1)
					}
				}
			})
		}
	})
	if fromSnapshot.Load() == 0 {
		t.Error("no view started from a snapshot: the property was not tested on that path")
	}
}

// checkAsOf compares AsOf(seq) with a rebuild of the log truncated at
// seq; it reports whether the view started from a snapshot.
func checkAsOf(t *testing.T, h *history, seq uint64) bool {
	t.Helper()
	v, err := h.s.AsOf(ctx, AtSeq(seq))
	mustT(t, err)
	defer v.Close()
	if v.Seq() != seq || v.SnapshotSeq() > seq {
		t.Fatalf("AsOf(%d) stands at %d from snapshot %d", seq, v.Seq(), v.SnapshotSeq())
	}
	want := truncatedRebuild(t, h.s, seq)
	for _, entity := range []string{"Airport", "River"} {
		compareEntities(t, v, want, entity, h.ids[entity])
	}
	if got, exp := digest(t, v.v.Path()), digest(t, want); got != exp {
		t.Fatalf("AsOf(%d) (from snapshot %d): read model digest %s, the truncated rebuild's %s", seq, v.SnapshotSeq(), got, exp)
	}
	return v.SnapshotSeq() > 0
}

// compareEntities checks every entity of the rebuilt read model at path
// against the view (Record), that the view has none of ids the rebuild
// lacks, and that the typed counts agree.
func compareEntities(t *testing.T, v *View, path, entity string, ids []string) {
	t.Helper()
	want := rebuiltRows(t, v, path, entity)
	for _, id := range ids {
		got, err := v.Record(ctx, entity, id)
		exp, ok := want[id]
		switch {
		case !ok && !errors.Is(err, ErrNotFound):
			t.Fatalf("AsOf(%d): %s %s: got %v, %v; the rebuild has none", v.Seq(), entity, id, got, err)
		case ok && err != nil:
			t.Fatalf("AsOf(%d): %s %s: %v; the rebuild has %v", v.Seq(), entity, id, err, exp)
		case ok && !reflect.DeepEqual(got, exp):
			t.Fatalf("AsOf(%d): %s %s:\n got %v\nwant %v", v.Seq(), entity, id, got, exp)
		}
	}
	n, err := countOf(v, entity)
	mustT(t, err)
	if n != len(want) {
		t.Fatalf("AsOf(%d): %d %s, the rebuild has %d", v.Seq(), n, entity, len(want))
	}
}

func countOf(v *View, entity string) (int, error) {
	if entity == "Airport" {
		return Count[Airport](ctx, v)
	}
	return Count[River](ctx, v)
}

// rebuiltRows reads every entity of one type from the read model at path.
func rebuiltRows(t *testing.T, v *View, path, entity string) map[string]map[string]any {
	t.Helper()
	shape, ok := v.v.Shape(entity)
	if !ok {
		t.Fatalf("no shape %s", entity)
	}
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	mustT(t, err)
	defer conn.Close()
	rows := map[string]map[string]any{}
	err = projector.Select(conn, shape, projector.Query{}, func(vals []any) error {
		row := map[string]any{shape.PK: vals[0]}
		for i, f := range shape.Fields {
			row[f.Name] = vals[i+1]
		}
		rows[vals[0].(string)] = row
		return nil
	})
	mustT(t, err)
	return rows
}

// TestAsOfByTimeResolvesToTheLastSequenceAtOrBeforeIt: a time between
// two commits stands at the earlier commit's last sequence, a commit's
// own time includes it, a time after the last record is the head, and
// typed reads see the state of then.
func TestAsOfByTimeResolvesToTheLastSequenceAtOrBeforeIt(t *testing.T) {
	t.Parallel()
	clock := events.NewManualClock(t0)
	s := openAsOfStore(t, t.TempDir(), clock)
	defer s.Close()
	var commits []CommitResult
	var times []time.Time
	for i := range 5 {
		clock.Advance(time.Second)
		times = append(times, clock.Now())
		commits = append(commits, commit(t, s, &River{ID: "R1", Name: fmt.Sprint("name ", i), Length: int64(i)}))
	}
	for i, c := range commits {
		for _, at := range []time.Time{times[i], times[i].Add(999 * time.Millisecond)} {
			v, err := s.AsOf(ctx, AtTime(at))
			mustT(t, err)
			r, err := Get[River](ctx, v, "R1")
			mustT(t, err)
			if v.Seq() != c.LastSeq || !v.At().Equal(times[i]) || r.Length != int64(i) {
				t.Errorf("AtTime(%s): seq %d at %s length %d, want seq %d at %s length %d", at, v.Seq(), v.At(), r.Length, c.LastSeq, times[i], i)
			}
			mustT(t, v.Close())
		}
	}
	v, err := s.AsOf(ctx, AtTime(times[4].Add(time.Hour)))
	mustT(t, err)
	defer v.Close()
	if head := checkpoint(t, s); v.Seq() != head {
		t.Errorf("a time after every record stands at %d, want the head %d", v.Seq(), head)
	}
}

// TestAsOfOutOfRange: sequence 0, a sequence past the head and a time
// before the first record are as_of_out_of_range, and leave no view.
func TestAsOfOutOfRange(t *testing.T) {
	clock := events.NewManualClock(t0)
	s := openAsOfStore(t, t.TempDir(), clock)
	defer s.Close()
	commit(t, s, &River{ID: "R1", Name: "one"})
	head := checkpoint(t, s)
	before := countAsOfDirs(t)
	for _, at := range []Point{AtSeq(0), AtSeq(head + 1), AtTime(t0.Add(-time.Nanosecond))} {
		v, err := s.AsOf(ctx, at)
		if !errors.Is(err, ErrAsOfOutOfRange) || v != nil {
			t.Errorf("AsOf(%s): %v, %v; want as_of_out_of_range", at, v, err)
		}
	}
	if v, err := s.AsOf(ctx, AtTime(t0)); err != nil || v.Seq() == 0 {
		t.Errorf("AsOf(the first record's time): %v", err)
	} else {
		mustT(t, v.Close())
	}
	if after := countAsOfDirs(t); after != before {
		t.Errorf("refused AsOf calls left %d temporary directories", after-before)
	}
}

func countAsOfDirs(t *testing.T) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "hikoutei-asof-*"))
	mustT(t, err)
	return len(m)
}

// TestAsOfViewIsReadOnlyAndFrozen: a view offers no way to write (its
// method set is reads only), later commits do not reach it, its file is
// private (0600) and Close removes it; reads after Close fail.
func TestAsOfViewIsReadOnlyAndFrozen(t *testing.T) {
	for i := range reflect.TypeFor[*View]().NumMethod() {
		m := reflect.TypeFor[*View]().Method(i).Name
		if !map[string]bool{"Seq": true, "At": true, "SnapshotSeq": true, "Record": true, "RecordSealed": true, "Close": true}[m] {
			t.Errorf("View has method %s: a view is read-only", m)
		}
	}
	clock := events.NewManualClock(t0)
	s := openAsOfStore(t, t.TempDir(), clock)
	defer s.Close()
	first := commit(t, s, &River{ID: "R1", Name: "before", Length: 1})
	v, err := s.AsOf(ctx, AtSeq(first.LastSeq))
	mustT(t, err)
	commit(t, s, &River{ID: "R1", Name: "after", Length: 2}, &River{ID: "R2", Name: "new"})
	r, err := Get[River](ctx, v, "R1")
	mustT(t, err)
	n, err := Count[River](ctx, v)
	mustT(t, err)
	if r.Name != "before" || n != 1 {
		t.Errorf("the view shows later commits: %+v, %d rivers", r, n)
	}
	path := v.v.Path()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("view file: %v, %v; want mode 0600", fi, err)
	}
	if err := writeThrough(v); err == nil {
		t.Error("a view's connection wrote to its read model")
	}
	mustT(t, v.Close())
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("Close left the view's directory: %v", err)
	}
	if _, err := Get[River](ctx, v, "R1"); !errors.Is(err, ErrStoreClosed) {
		t.Errorf("a read after Close: %v, want store_closed", err)
	}
	if err := v.Close(); !errors.Is(err, ErrStoreClosed) {
		t.Errorf("a second Close: %v", err)
	}
}

// writeThrough tries to write through one of the view's connections.
func writeThrough(v *View) error {
	conn, err := v.v.ReadConn(ctx)
	if err != nil {
		return err
	}
	defer v.v.PutConn(conn)
	return sqlitex.ExecuteTransient(conn, "DELETE FROM hk_meta", nil)
}

// TestAsOfDirReadsAClosedStoreWithoutWritingInIt: AsOfDir builds the view
// of a store that is not open from its snapshot plus the log, with the
// shapes the log declares (Record) or the given entities (typed reads),
// changes no file of the store directory, and refuses while the store is
// open.
func TestAsOfDirReadsAClosedStoreWithoutWritingInIt(t *testing.T) {
	dir := t.TempDir()
	clock := events.NewManualClock(t0)
	s := openAsOfStore(t, dir, clock)
	commit(t, s, &River{ID: "R1", Name: "one", Length: 1})
	_, err := s.Snapshot(ctx)
	mustT(t, err)
	at := commit(t, s, &River{ID: "R1", Name: "two", Length: 2})
	commit(t, s, &River{ID: "R1", Name: "three", Length: 3})
	if _, err := AsOfDir(ctx, dir, AtSeq(at.LastSeq)); !errors.Is(err, ErrStoreLocked) {
		t.Errorf("AsOfDir on an open store: %v, want store_locked", err)
	}
	mustT(t, s.Close())
	before := treeState(t, dir)

	v, err := AsOfDir(ctx, dir, AtSeq(at.LastSeq))
	mustT(t, err)
	rec, err := v.Record(ctx, "River", "R1")
	mustT(t, err)
	if rec["name"] != "two" || rec["length"] != int64(2) || v.SnapshotSeq() == 0 {
		t.Errorf("declared view at %d (snapshot %d): %v", v.Seq(), v.SnapshotSeq(), rec)
	}
	if _, err := Get[River](ctx, v, "R1"); !errors.Is(err, ErrUnregisteredType) {
		t.Errorf("a typed read of a view without entities: %v", err)
	}
	if _, err := v.Record(ctx, "Lake", "L1"); !errors.Is(err, ErrUnregisteredType) {
		t.Errorf("Record of an undeclared entity: %v", err)
	}
	mustT(t, v.Close())

	v, err = AsOfDir(ctx, dir, AtSeq(at.LastSeq), asofEntities()...)
	mustT(t, err)
	r, err := Get[River](ctx, v, "R1")
	mustT(t, err)
	if r.Name != "two" {
		t.Errorf("typed view: %+v", r)
	}
	mustT(t, v.Close())
	if after := treeState(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("AsOfDir changed the store directory:\nbefore %v\n after %v", before, after)
	}
}

// treeState is every file under dir with its size and modification time.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			out[path] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		}
		return err
	})
	mustT(t, err)
	return out
}

// TestAsOfWhileTheStoreCommits: views built while another goroutine keeps
// committing (and snapshotting) show exactly the state at their sequence.
func TestAsOfWhileTheStoreCommits(t *testing.T) {
	clock := events.NewManualClock(t0)
	s := openAsOfStore(t, t.TempDir(), clock)
	defer s.Close()
	seqs := make(chan CommitResult, 200)
	done := make(chan error, 1)
	go func() {
		defer close(seqs)
		for i := range 40 {
			u := s.Begin()
			if err := u.Persist(&River{ID: "R1", Name: "busy", Length: int64(i)}); err != nil {
				done <- err
				return
			}
			res, err := u.Commit(ctx)
			if err == nil && i%10 == 9 {
				_, err = s.Snapshot(ctx)
			}
			if err != nil {
				done <- err
				return
			}
			seqs <- res
		}
		done <- nil
	}()
	i := 0
	for res := range seqs {
		if i%5 == 0 {
			v, err := s.AsOf(ctx, AtSeq(res.LastSeq))
			mustT(t, err)
			r, err := Get[River](ctx, v, "R1")
			mustT(t, err)
			if r.Length != int64(i) {
				t.Errorf("AsOf(%d): length %d, want %d", res.LastSeq, r.Length, i)
			}
			mustT(t, v.Close())
		}
		i++
	}
	mustT(t, <-done)
}

// RiverV2 is River with one more field: a later declaration of "River".
type RiverV2 struct {
	ID     string  `hikoutei:"id,pk"`
	Name   string  `hikoutei:"name"`
	Length int64   `hikoutei:"length"`
	Basin  *string `hikoutei:"basin"`
	Delta  bool    `hikoutei:"delta"`
}

// TestAsOfSkipsASnapshotOfOtherShapes: a snapshot taken while the
// entities had other shapes cannot serve a view of the current ones: the
// view is replayed from the first record instead, and still right.
func TestAsOfSkipsASnapshotOfOtherShapes(t *testing.T) {
	dir := t.TempDir()
	clock := events.NewManualClock(t0)
	s := openAsOfStore(t, dir, clock)
	at := commit(t, s, &River{ID: "R1", Name: "one", Length: 1})
	_, err := s.Snapshot(ctx)
	mustT(t, err)
	mustT(t, s.Close())
	s, err = Open(t.Context(), dir, Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, Logger: slog.New(slog.DiscardHandler)},
		Entity[RiverV2]("River"))
	mustT(t, err)
	defer s.Close()
	commit(t, s, &RiverV2{ID: "R1", Name: "two", Delta: true})
	v, err := s.AsOf(ctx, AtSeq(at.LastSeq+1))
	mustT(t, err)
	defer v.Close()
	r, err := Get[RiverV2](ctx, v, "R1")
	mustT(t, err)
	if v.SnapshotSeq() != 0 || r.Name != "one" || r.Delta {
		t.Errorf("view from snapshot %d: %+v", v.SnapshotSeq(), r)
	}
}
