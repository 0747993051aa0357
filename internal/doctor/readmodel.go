package doctor

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// maxCorruptRows is how many corrupt rows doctor names.
const maxCorruptRows = 5

// rebuildHint says how to recover a read model that differs from the log.
const rebuildHint = "stop the store and run `hikoutei replay --dir DIR`: it rebuilds read.sqlite from the log and keeps the damaged one aside"

// checkReadModelData verifies read.sqlite's data, which the store can only
// get from the log: every entity row against its digest, then every table
// against a rebuild from the log up to the read model's checkpoint cp (in
// a temporary directory), which also finds deleted rows and rows whose
// digest was recomputed.
func checkReadModelData(r *Report, dir string, l *events.Log, cp uint64) {
	path := filepath.Join(dir, projector.FileName)
	shapes, err := engine.DeclaredShapes(l)
	if err != nil {
		r.add("read.sqlite", Fail, "cannot read the entity declarations from the log: %v", err)
		return
	}
	checkHeader(r, path)
	r.step(Progress{Step: "checking the read model's integrity"})
	checkIntegrity(r, path)
	r.step(Progress{Step: "checking the read model's rows against their digests"})
	checkRowDigests(r, path, shapes)
	checkAgainstRebuild(r, path, l, cp)
}

// checkHeader checks the fields of the SQLite file header that SQLite
// itself validates only when it writes (a damaged write version makes the
// file read-only; integrity_check does not look at it).
func checkHeader(r *Report, path string) {
	f, err := os.Open(path)
	if err != nil {
		r.add("read.sqlite", Fail, "cannot open: %v (%s)", err, rebuildHint)
		return
	}
	defer f.Close()
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		r.add("read.sqlite", Fail, "%s: header unreadable: %v (%s)", projector.ErrReadModelCorrupt, err, rebuildHint)
		return
	}
	pageSize := int(binary.BigEndian.Uint16(h[16:18]))
	switch {
	case string(h[:16]) != "SQLite format 3\x00":
		r.add("read.sqlite", Fail, "%s: not an SQLite database (%s)", projector.ErrReadModelCorrupt, rebuildHint)
	case pageSize != 1 && (pageSize < 512 || pageSize&(pageSize-1) != 0):
		r.add("read.sqlite", Fail, "%s: header: page size %d (%s)", projector.ErrReadModelCorrupt, pageSize, rebuildHint)
	case h[18] < 1 || h[18] > 2 || h[19] < 1 || h[19] > 2 || h[21] != 64 || h[22] != 32 || h[23] != 32:
		r.add("read.sqlite", Fail, "%s: header: format versions %d/%d, payload fractions %d/%d/%d (%s)",
			projector.ErrReadModelCorrupt, h[18], h[19], h[21], h[22], h[23], rebuildHint)
	}
}

// checkIntegrity runs SQLite's integrity_check: the file's structure, and
// every index against its table (a damaged key index hides a row from Get).
func checkIntegrity(r *Report, path string) {
	conn, done, err := engine.OpenReadModelFile(filepath.Dir(path))
	if err != nil {
		r.add("read.sqlite", Fail, "cannot open: %v (%s)", err, rebuildHint)
		return
	}
	defer done()
	var problems []string
	err = sqlitex.ExecuteTransient(conn, fmt.Sprintf("PRAGMA integrity_check(%d)", maxCorruptRows), &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error { problems = append(problems, s.ColumnText(0)); return nil }})
	switch {
	case err != nil:
		r.add("read.sqlite", Fail, "integrity check failed: %v (%s)", err, rebuildHint)
	case len(problems) == 1 && problems[0] == "ok":
		r.add("read.sqlite", OK, "SQLite integrity check ok")
	default:
		r.add("read.sqlite", Fail, "%s: SQLite integrity check: %s (%s)", projector.ErrReadModelCorrupt,
			strings.Join(problems, "; "), rebuildHint)
	}
}

// onReadModel runs f on a read-only connection to the read model at
// path, opened so that it leaves no -wal or -shm file behind
// (engine.OpenReadModelFile). Errors: projector.ErrReadModelInvalid when
// it cannot be opened; f's.
func onReadModel(path string, f func(*sqlite.Conn) error) error {
	conn, done, err := engine.OpenReadModelFile(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("%w: %w", projector.ErrReadModelInvalid, err)
	}
	defer done()
	return f(conn)
}

func checkRowDigests(r *Report, path string, shapes []events.EntityShape) {
	var n int
	var bad []*projector.CorruptRowError
	err := onReadModel(path, func(conn *sqlite.Conn) (err error) {
		n, bad, err = projector.VerifyRowsOn(conn, shapes, maxCorruptRows)
		return err
	})
	if err != nil {
		r.add("read.sqlite", Fail, "rows unreadable after %d: %v (%s)", n, err, rebuildHint)
		return
	}
	for _, b := range bad {
		r.add("read.sqlite", Fail, "%v (%s)", b, rebuildHint)
	}
	if len(bad) == 0 {
		r.add("read.sqlite", OK, "%d entity rows match their digests", n)
	}
}

func checkAgainstRebuild(r *Report, path string, l *events.Log, cp uint64) {
	tmp, err := os.MkdirTemp("", "hikoutei-doctor-")
	if err != nil {
		r.add("read.sqlite", Fail, "cannot rebuild from the log to compare: %v", err)
		return
	}
	defer os.RemoveAll(tmp)
	target := filepath.Join(tmp, projector.FileName)
	r.step(Progress{Step: "rebuilding the read model from the log to compare"})
	var live, rebuilt map[string]string
	err = onReadModel(path, func(conn *sqlite.Conn) (err error) {
		live, err = projector.TableDigestsOn(conn)
		return err
	})
	if err == nil {
		if _, err = engine.ReplayLog(l, target, cp); err == nil {
			rebuilt, err = projector.TableDigests(target)
		}
	}
	if err != nil {
		r.add("read.sqlite", Fail, "cannot compare with a rebuild from the log: %v", err)
		return
	}
	differ := differingTables(live, rebuilt)
	for _, t := range differ {
		r.add("read.sqlite", Fail, "%s: table %s differs from a rebuild from the log at checkpoint %d "+
			"(rows changed, added or deleted outside the store) (%s)", projector.ErrReadModelCorrupt, t, cp, rebuildHint)
	}
	if len(differ) == 0 {
		r.add("read.sqlite", OK, "equals a rebuild from the log at checkpoint %d (%d tables)", cp, len(live))
	}
}

// differingTables lists, sorted, the tables whose digests differ or that
// only one side has.
func differingTables(a, b map[string]string) []string {
	var out []string
	for t, d := range a {
		if b[t] != d {
			out = append(out, t)
		}
	}
	for t := range b {
		if _, ok := a[t]; !ok {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// checkSnapshot verifies one snapshot against its manifest and the log.
func checkSnapshot(r *Report, d *snapshots.Dir, seq uint64, storeID string, v snapshots.Vouchers) {
	m, err := d.Verify(seq, storeID)
	if err != nil {
		r.add("snapshots", Fail, "%v (skipped at restart; delete it or take a new snapshot)", err)
		return
	}
	ev, err := v.EventSeq(m)
	if err != nil {
		r.add("snapshots", Fail, "%v: it was changed after it was taken, or the log lost the event; it is never restored "+
			"(delete it or take a new snapshot)", err)
		return
	}
	r.add("snapshots", OK, "snapshot at seq %d valid, vouched for by the event at seq %d", seq, ev)
}
