package doctor

import (
	"os"
	"path/filepath"
	"sort"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// maxCorruptRows is how many corrupt rows doctor names.
const maxCorruptRows = 5

// rebuildHint says how to recover a read model that differs from the log.
const rebuildHint = "stop the store and delete read.sqlite (and its -wal, -shm): the next open rebuilds it from the log"

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
	checkRowDigests(r, path, shapes)
	checkAgainstRebuild(r, path, l, cp)
}

func checkRowDigests(r *Report, path string, shapes []events.EntityShape) {
	n, bad, err := projector.VerifyRows(path, shapes, maxCorruptRows)
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
	live, err := projector.TableDigests(path)
	var rebuilt map[string]string
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
