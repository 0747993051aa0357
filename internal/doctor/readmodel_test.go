package doctor_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/doctor"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

var noteShape = events.EntityShape{Name: "Note", PK: "id", Fields: []events.FieldShape{{Name: "text", Kind: events.KindString, Owner: events.OwnerSystem}}}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// closedStore is a store with notes and one snapshot, closed; it returns
// the snapshot's manifest.
func closedStore(t *testing.T) (string, snapshots.Manifest) {
	t.Helper()
	dir := t.TempDir()
	e, err := engine.Open(dir, engine.Config{Clock: events.NewManualClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)),
		HeartbeatInterval: -1, AcquireWait: -1}, engine.Shapes(noteShape))
	must(t, err)
	for i := range 20 {
		_, err := e.Commit([]engine.Command{{Entity: "Note", ID: fmt.Sprint(i), Values: map[string]any{"text": "note"}}})
		must(t, err)
	}
	m, err := e.Snapshot()
	must(t, err)
	must(t, e.Close())
	return dir, m
}

// findings returns the report's findings of severity sev as lines.
func findings(rep doctor.Report, sev doctor.Severity) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		if f.Severity == sev {
			fmt.Fprintf(&b, "%s: %s\n", f.Check, f.Detail)
		}
	}
	return b.String()
}

func TestHealthyStoreEqualsItsRebuild(t *testing.T) {
	dir, m := closedStore(t)
	rep := doctor.Check(dir)
	ok := findings(rep, doctor.OK)
	if !rep.Healthy() || !strings.Contains(ok, "equals a rebuild from the log") || !strings.Contains(ok, "20 entity rows match") ||
		!strings.Contains(ok, fmt.Sprintf("snapshot at seq %d valid, vouched for by the event at seq %d", m.Seq, m.Seq+1)) {
		t.Fatalf("findings:\n%s%s", ok, findings(rep, doctor.Fail))
	}
}

// A snapshot written without its snapshot.taken event (as if the log had
// lost it) is a failure; the vouched one stays valid.
func TestSnapshotWithoutVouchingEventFails(t *testing.T) {
	dir, m := closedStore(t)
	conn, err := sqlite.OpenConn(filepath.Join(dir, projector.FileName), sqlite.OpenReadOnly)
	must(t, err)
	d, err := snapshots.Open(dir, 5, nil)
	must(t, err)
	unvouched, err := d.Take(conn, m.Seq+1, m.StoreID, func(snapshots.Manifest) error { return nil })
	must(t, err)
	must(t, conn.Close())
	rep := doctor.Check(dir)
	if fail := findings(rep, doctor.Fail); !strings.Contains(fail, fmt.Sprintf("snapshot_unvouched: %d:", unvouched.Seq)) ||
		strings.Count(fail, "\n") != 1 {
		t.Fatalf("failures:\n%s", fail)
	}
}

// A damaged write version in the SQLite header (SQLite then treats the
// file as read-only; integrity_check does not look at it) is a failure.
func TestDamagedHeaderFails(t *testing.T) {
	dir, _ := closedStore(t)
	path := filepath.Join(dir, projector.FileName)
	data, err := os.ReadFile(path)
	must(t, err)
	data[18] ^= 0xff
	must(t, os.WriteFile(path, data, 0o600))
	if fail := findings(doctor.Check(dir), doctor.Fail); !strings.Contains(fail, "read_model_corrupt: header: format versions") {
		t.Fatalf("failures:\n%s", fail)
	}
}
