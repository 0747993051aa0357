package hikoutei

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/doctor"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// Repro 8 of issue 15 and the read-model/snapshot half of I27: damage to
// read.sqlite or a snapshot is found (at read time by the row digests, by
// doctor against a rebuild from the log, at restore by the log's
// snapshot.taken events) and reported as a typed error, never returned as
// data and never a panic. Every test uses real store files.

// airportTag is hk_row_digest's tag for the Airport entity: the key, then
// name, city, country, iata (s), latitude, longitude (f), altitude (i),
// tz, notes (s), checked (t), active (b).
const airportTag = "Airport:sssssffisstb"

// storeWith800 is a closed store holding the first 800 airports.
func storeWith800(t *testing.T) (string, []Airport) {
	t.Helper()
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 800)
	mustT(t, s.Close())
	return dir, readAirports(t)[:800]
}

// sqlExec runs q on its own connection to the SQLite file at path, as the
// sqlite3 tool would.
func sqlExec(t *testing.T, path, q string, args ...any) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	mustT(t, err)
	defer conn.Close()
	mustT(t, sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: args}))
}

// sqlText runs a one-value query on its own read-only connection.
func sqlText(t *testing.T, path, q string) string {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	mustT(t, err)
	defer conn.Close()
	var v string
	mustT(t, sqlitex.Execute(conn, q, &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error { v = s.ColumnText(0); return nil }}))
	return v
}

// rehashRow changes an Airport row's name in the SQLite file at path and
// recomputes its row digest, with the projector's own digest function:
// tampering that the read-time check cannot see.
func rehashRow(t *testing.T, path, id, name string) {
	t.Helper()
	storeID := sqlText(t, path, "SELECT value FROM hk_meta WHERE key = 'store_id'")
	d := Entity[Airport]("Airport")
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: []events.EntityShape{d.shape()}})
	mustT(t, err)
	defer p.Close()
	mustT(t, sqlitex.Execute(p.Conn(), `UPDATE "Airport" SET name = ?1, hk_digest = hk_row_digest('`+airportTag+`', id, ?1,
  city, country, iata, latitude, longitude, altitude, tz, notes, checked, active) WHERE id = ?2`,
		&sqlitex.ExecOptions{Args: []any{name, id}}))
}

// failed returns the Fail findings of a doctor report, one per line.
func failed(rep doctor.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		if f.Severity == doctor.Fail {
			fmt.Fprintf(&b, "%s: %s\n", f.Check, f.Detail)
		}
	}
	return b.String()
}

// wantDoctorFail checks that doctor fails the store with a finding of
// check that contains every one of want.
func wantDoctorFail(t *testing.T, dir, check string, want ...string) {
	t.Helper()
	rep := doctor.Check(dir)
	if rep.Healthy() {
		t.Fatalf("doctor says healthy: %+v", rep.Findings)
	}
	for _, f := range rep.Findings {
		if f.Severity != doctor.Fail || f.Check != check {
			continue
		}
		all := true
		for _, w := range want {
			all = all && strings.Contains(f.Detail, w)
		}
		if all {
			return
		}
	}
	t.Fatalf("no %s failure naming %q:\n%s", check, want, failed(rep))
}

func TestRepro8_FlippedByteInRow(t *testing.T) {
	t.Parallel()
	dir, all := storeWith800(t)
	victim := all[400]
	path := filepath.Join(dir, ReadModelFile)
	data, err := os.ReadFile(path)
	mustT(t, err)
	if bytes.Count(data, []byte(victim.Name)) != 1 {
		t.Fatalf("%q is not stored exactly once", victim.Name)
	}
	data[bytes.Index(data, []byte(victim.Name))+1] = 0xff // invalid UTF-8 inside the row
	mustT(t, os.WriteFile(path, data, 0o600))
	if got := sqlText(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Fatalf("integrity_check = %q: the damage is not the silent kind", got)
	}

	wantDoctorFail(t, dir, "read.sqlite", "read_model_corrupt", "Airport", victim.ID)
	wantDoctorFail(t, dir, "read.sqlite", "table Airport differs from a rebuild")
	s := openStore(t, dir)
	defer s.Close()
	a, err := Get[Airport](ctx, s, victim.ID)
	var cre *projector.CorruptRowError
	if !errors.Is(err, ErrReadModelCorrupt) || !errors.As(err, &cre) || a != nil || cre.Table != "Airport" || !utf8.ValidString(err.Error()) {
		t.Fatalf("Get of the damaged row = %+v, %v", a, err)
	}
	if list, err := Find[Airport](ctx, s); !errors.Is(err, ErrReadModelCorrupt) {
		t.Fatalf("Find over the damaged row = %d airports, %v", len(list), err)
	}
	if a, err := Get[Airport](ctx, s, all[0].ID); err != nil || a.Name != all[0].Name {
		t.Fatalf("an intact row: %+v, %v", a, err)
	}
}

func TestRepro8_SQLUpdate(t *testing.T) {
	t.Parallel()
	dir, all := storeWith800(t)
	path := filepath.Join(dir, ReadModelFile)
	sqlExec(t, path, `UPDATE "Airport" SET altitude = altitude + 1 WHERE id = ?`, all[10].ID)
	wantDoctorFail(t, dir, "read.sqlite", "read_model_corrupt", all[10].ID)
	s := openStore(t, dir)
	if a, err := Get[Airport](ctx, s, all[10].ID); !errors.Is(err, ErrReadModelCorrupt) || a != nil {
		t.Fatalf("Get of the updated row = %+v, %v", a, err)
	}
	mustT(t, s.Close())

	// An UPDATE that also recomputes the row digest reads back as if the
	// store wrote it; doctor's rebuild from the log finds it.
	mustT(t, removeReadModel(path))
	s = openStore(t, dir) // rebuilt from the log
	mustT(t, s.Close())
	rehashRow(t, path, all[20].ID, "Hacked")
	wantDoctorFail(t, dir, "read.sqlite", "table Airport differs from a rebuild")
	if rep := doctor.Check(dir); strings.Contains(failed(rep), "digest") {
		t.Fatalf("a recomputed digest is reported as a digest mismatch:\n%s", failed(rep))
	}
	s = openStore(t, dir)
	defer s.Close()
	if a, err := Get[Airport](ctx, s, all[20].ID); err != nil || a.Name != "Hacked" {
		t.Fatalf("the re-hashed row does not read back: %+v, %v", a, err)
	}
}

func TestRepro8_SQLDelete(t *testing.T) {
	t.Parallel()
	dir, all := storeWith800(t)
	path := filepath.Join(dir, ReadModelFile)
	sqlExec(t, path, `DELETE FROM "Airport" WHERE id = ?`, all[30].ID)
	wantDoctorFail(t, dir, "read.sqlite", "read_model_corrupt", "table Airport differs from a rebuild")

	// The recovery doctor names: rebuild read.sqlite from the log (the
	// damaged one kept aside); the row is back.
	if _, aside, err := RebuildReadModel(t.Context(), dir, ReplayOptions{}, Entity[Airport]("Airport")); err != nil || aside == "" {
		t.Fatalf("rebuild: %v (kept as %q)", err, aside)
	}
	s := openStore(t, dir)
	if a, err := Get[Airport](ctx, s, all[30].ID); err != nil || a.Name != all[30].Name {
		t.Fatalf("after the rebuild: %+v, %v", a, err)
	}
	mustT(t, s.Close())
	if rep := doctor.Check(dir); !rep.Healthy() {
		t.Fatalf("doctor after the rebuild:\n%s", failed(rep))
	}
}

func TestRepro8_RehashedSnapshotManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	s := openStore(t, dir, func(o *Options) { o.Logger = logger })
	loadAirports(t, s, 400)
	older, err := s.Snapshot(ctx)
	mustT(t, err)
	loadAirports(t, s, 800)
	newer, err := s.Snapshot(ctx)
	mustT(t, err)
	mustT(t, s.Close())
	all := readAirports(t)[:800]

	tamperSnapshot(t, dir, newer.Seq, all[500].ID)
	wantDoctorFail(t, dir, "snapshots", "snapshot_unvouched", fmt.Sprint(newer.Seq))
	mustT(t, removeReadModel(filepath.Join(dir, ReadModelFile)))
	first, n := reopenPhase(t, dir, logger, all)
	if first.Phase != "snapshot" || first.Total != n-older.Seq {
		t.Fatalf("did not fall back to the older snapshot %d: %+v", older.Seq, first)
	}
	if !strings.Contains(logs.String(), "snapshot_unvouched") {
		t.Fatalf("the refused snapshot was not logged:\n%s", logs.String())
	}

	tamperSnapshot(t, dir, older.Seq, all[100].ID) // no snapshot left: rebuild from the log
	mustT(t, removeReadModel(filepath.Join(dir, ReadModelFile)))
	if first, _ := reopenPhase(t, dir, logger, all); first.Phase != "rebuild" {
		t.Fatalf("with every snapshot refused: %+v", first)
	}
}

// tamperSnapshot changes an airport's name inside the snapshot at seq,
// with a valid row digest, then rewrites its manifest to the new file's
// size and SHA-256: everything beside the file agrees with it.
func tamperSnapshot(t *testing.T, dir string, seq uint64, id string) {
	t.Helper()
	file := filepath.Join(dir, snapshots.DirName, fmt.Sprintf("%020d.sqlite", seq))
	rehashRow(t, file, id, "Tampered")
	if _, bad, err := projector.VerifyRows(file, []events.EntityShape{Entity[Airport]("Airport").shape()}, 1); err != nil || len(bad) > 0 {
		t.Fatalf("the tampered snapshot's rows do not verify: %v %v", bad, err)
	}
	data, err := os.ReadFile(file)
	mustT(t, err)
	manifest := filepath.Join(dir, snapshots.DirName, fmt.Sprintf("%020d.json", seq))
	var m snapshots.Manifest
	raw, err := os.ReadFile(manifest)
	mustT(t, err)
	mustT(t, json.Unmarshal(raw, &m))
	sum := sha256.Sum256(data)
	m.Size, m.Hash = int64(len(data)), "sha256:"+hex.EncodeToString(sum[:])
	raw, err = json.Marshal(m)
	mustT(t, err)
	mustT(t, os.WriteFile(manifest, raw, 0o600))
	d, err := snapshots.Open(dir, 0, nil)
	mustT(t, err)
	if _, err := d.Verify(seq, m.StoreID); err != nil {
		t.Fatalf("the re-hashed manifest does not match its file: %v", err)
	}
}

// reopenPhase opens the store, checks it holds every airport as committed
// and equals a rebuild from the log, closes it and returns the first
// progress report of the open and the checkpoint it reached.
func reopenPhase(t *testing.T, dir string, logger *slog.Logger, all []Airport) (Progress, uint64) {
	t.Helper()
	var first Progress
	s := openStore(t, dir, func(o *Options) {
		o.Logger = logger
		o.Progress = func(p Progress) {
			if first.Phase == "" {
				first = p
			}
		}
	})
	for _, want := range all {
		a, err := Get[Airport](ctx, s, want.ID)
		if err != nil || a.Name != want.Name {
			t.Fatalf("airport %s after the restart: %+v, %v", want.ID, a, err)
		}
	}
	n, live := checkpoint(t, s), digest(t, s.ReadModelPath())
	mustT(t, s.Close())
	if replayDigest(t, dir, n) != live {
		t.Fatal("the reopened read model differs from a rebuild from the log")
	}
	return first, n
}

// TestI27_ReadModelAndSnapshotCorruptionIsATypedErrorNeverAPanic flips one
// byte at a time of a closed store's read.sqlite (every page: its start,
// middle and end, and the database header's fields) and of its snapshot
// file and manifest, each in a fresh copy of the store. For every damage:
// doctor, Open, Get, Find and Close never panic; every error is typed; no
// read returns a value other than the committed one; and when the damage
// changed what the read model holds (its logical digest, or a read that
// fails or misses an entity), doctor reports a failure. Under the race
// detector it runs a fixed sample of the damages (see sample).
func TestI27_ReadModelAndSnapshotCorruptionIsATypedErrorNeverAPanic(t *testing.T) {
	t.Parallel()
	pristine, want := damageFixture(t)
	rm := filepath.Join(pristine, ReadModelFile)
	clean, err := projector.Digest(rm)
	mustT(t, err)
	var cases []damage
	for _, off := range readModelOffsets(t, rm) {
		cases = append(cases, damage{file: ReadModelFile, off: off, clean: clean})
	}
	snapDir := filepath.Join(pristine, snapshots.DirName)
	entries, err := os.ReadDir(snapDir)
	mustT(t, err)
	for _, e := range entries {
		st, err := os.Stat(filepath.Join(snapDir, e.Name()))
		mustT(t, err)
		for i := range int64(12) {
			cases = append(cases, damage{file: filepath.Join(snapshots.DirName, e.Name()), off: st.Size() * i / 12, snapshot: true})
		}
	}
	var detected atomic.Int64
	cases = sample(cases)
	t.Run("damages", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.String(), func(t *testing.T) {
				t.Parallel()
				if c.run(t, pristine, want) {
					detected.Add(1)
				}
			})
		}
	})
	t.Logf("%d damages, %d changed the data and were reported by doctor", len(cases), detected.Load())
}

// damageFixture is a closed store with 40 airports, a snapshot taken after
// the first 30, updates and a remove after it; and every airport as Find
// returns it, by id, rendered as JSON.
func damageFixture(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 30)
	_, err := s.Snapshot(ctx)
	mustT(t, err)
	loadAirports(t, s, 40)
	all := readAirports(t)[:40]
	all[3].Notes = "checked"
	u := s.Begin()
	mustT(t, u.Persist(&all[3]))
	mustT(t, u.Remove(&all[7]))
	_, err = u.Commit(ctx)
	mustT(t, err)
	list, err := Find[Airport](ctx, s)
	mustT(t, err)
	mustT(t, s.Close())
	want := map[string]string{}
	for _, a := range list {
		want[a.ID] = renderAirport(t, a)
	}
	return dir, want
}

func renderAirport(t *testing.T, a *Airport) string {
	t.Helper()
	b, err := json.Marshal(a)
	mustT(t, err)
	return string(b)
}

// readModelOffsets are the bytes the damage test flips in read.sqlite: the
// header fields of page 1, then each page's first byte, a byte inside and
// its last byte.
func readModelOffsets(t *testing.T, path string) []int64 {
	t.Helper()
	st, err := os.Stat(path)
	mustT(t, err)
	offs := []int64{16, 18, 19, 20, 21, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 92, 96}
	const page = 4096
	for p := int64(0); p*page < st.Size(); p++ {
		offs = append(offs, p*page+100+p%3, p*page+100+(p*997)%3900, p*page+page-1-(p*131)%1500)
	}
	return offs
}

// damage is one flipped byte of one file of a store.
type damage struct {
	file     string // relative to the store directory
	off      int64
	snapshot bool   // a snapshot file: read.sqlite is removed so the open restores
	clean    string // read.sqlite's logical digest before the damage
}

func (c damage) String() string { return fmt.Sprintf("%s@%d", c.file, c.off) }

// run applies the damage to a copy of pristine and checks it; it reports
// whether the damage changed the data (and doctor reported it).
func (c damage) run(t *testing.T, pristine string, want map[string]string) bool {
	t.Helper()
	dir := copyStore(t, pristine)
	path := filepath.Join(dir, c.file)
	data, err := os.ReadFile(path)
	mustT(t, err)
	data[c.off] ^= 0xff
	mustT(t, os.WriteFile(path, data, 0o600))
	changed := c.snapshot
	if c.snapshot {
		mustT(t, removeReadModel(filepath.Join(dir, ReadModelFile)))
	} else if d, err := projector.Digest(path); err != nil || d != c.clean {
		changed = true
	}
	var rep doctor.Report
	if p := noPanic(func() { rep = doctor.Check(dir) }); p != nil {
		t.Errorf("%s: doctor panicked: %v", c, p)
		return false
	}
	observed, ok := c.readBack(t, dir, want)
	if (changed || observed) && rep.Healthy() {
		t.Errorf("%s: the damage changed the data (digest changed %v, reads saw it %v) but doctor says healthy", c, changed, observed)
	}
	return ok && (changed || observed)
}

// readBack opens the damaged store and reads every airport. It reports
// whether a read saw the damage (a typed error, a missing entity) and
// whether everything it checked held.
func (c damage) readBack(t *testing.T, dir string, want map[string]string) (observed, ok bool) {
	t.Helper()
	var s *Store
	var err error
	if p := noPanic(func() {
		s, err = Open(t.Context(), dir, Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1,
			Logger: slog.New(slog.DiscardHandler)}, Entity[Airport]("Airport"))
	}); p != nil {
		t.Errorf("%s: Open panicked: %v", c, p)
		return true, false
	}
	if err != nil {
		return true, c.typed(t, "Open", err)
	}
	defer func() {
		if p := noPanic(func() { err = s.Close() }); p != nil || err != nil {
			t.Errorf("%s: Close: %v %v", c, p, err)
		}
	}()
	ok = true
	for id, w := range want {
		var a *Airport
		if p := noPanic(func() { a, err = Get[Airport](ctx, s, id) }); p != nil {
			t.Errorf("%s: Get panicked: %v", c, p)
			return true, false
		}
		switch {
		case err != nil:
			observed, ok = true, ok && c.typed(t, "Get", err)
		case renderAirport(t, a) != w:
			t.Errorf("%s: Get(%s) returned %s, committed %s", c, id, renderAirport(t, a), w)
			ok = false
		}
	}
	var list []*Airport
	if p := noPanic(func() { list, err = Find[Airport](ctx, s) }); p != nil {
		t.Errorf("%s: Find panicked: %v", c, p)
		return true, false
	}
	if err != nil {
		return true, ok && c.typed(t, "Find", err)
	}
	for _, a := range list {
		if w, known := want[a.ID]; !known || renderAirport(t, a) != w {
			t.Errorf("%s: Find returned %s, committed %q", c, renderAirport(t, a), w)
			ok = false
		}
	}
	return observed || len(list) != len(want), ok
}

// typed checks that err is one of the errors damage may cause.
func (c damage) typed(t *testing.T, op string, err error) bool {
	t.Helper()
	for _, e := range []error{ErrReadModelCorrupt, projector.ErrReadModelInvalid, ErrNotFound} {
		if errors.Is(err, e) && utf8.ValidString(err.Error()) {
			return true
		}
	}
	t.Errorf("%s: %s: untyped error %v", c, op, err)
	return false
}

func noPanic(fn func()) (p any) {
	defer func() { p = recover() }()
	fn()
	return nil
}

// copyStore copies a closed store's files into a new directory.
func copyStore(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	for _, rel := range []string{events.LogFileName, ReadModelFile, snapshots.DirName} {
		st, err := os.Stat(filepath.Join(src, rel))
		if err != nil {
			continue
		}
		if !st.IsDir() {
			copyFile(t, filepath.Join(src, rel), filepath.Join(dst, rel))
			continue
		}
		mustT(t, os.Mkdir(filepath.Join(dst, rel), 0o700))
		entries, err := os.ReadDir(filepath.Join(src, rel))
		mustT(t, err)
		for _, e := range entries {
			copyFile(t, filepath.Join(src, rel, e.Name()), filepath.Join(dst, rel, e.Name()))
		}
	}
	return dst
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	mustT(t, err)
	mustT(t, os.WriteFile(dst, data, 0o600))
}
