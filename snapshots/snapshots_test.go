package snapshots_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fixture is a store directory with a real log (held by w) and a small
// SQLite database to snapshot.
type fixture struct {
	dir  string
	w    *events.Writer
	conn *sqlite.Conn
	snap *snapshots.Dir
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	w, err := events.OpenWriter(dir, events.WriterOptions{Log: events.Options{Clock: events.NewManualClock(t0)}, Operation: "test",
		AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	t.Cleanup(func() { w.Close() })
	conn, err := sqlite.OpenConn(filepath.Join(dir, "db.sqlite"), sqlite.OpenReadWrite|sqlite.OpenCreate)
	must(t, err)
	t.Cleanup(func() { conn.Close() })
	must(t, sqlitex.ExecuteScript(conn, "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a'), ('b');", nil))
	snap, err := snapshots.Open(dir, 5, slog.New(slog.DiscardHandler))
	must(t, err)
	return &fixture{dir: dir, w: w, conn: conn, snap: snap}
}

// vouch appends snapshot.taken for m to the log.
func (f *fixture) vouch(m snapshots.Manifest) error {
	version, err := f.w.Log().StreamVersion(events.SnapshotStream)
	if err != nil {
		return err
	}
	res, err := f.w.Append(events.Unit{Streams: []events.StreamAppend{{Stream: events.SnapshotStream, ExpectedVersion: version,
		Events: []events.Event{events.New(events.SnapshotStream, events.SnapshotTaken{Seq: m.Seq, Digest: m.Hash, Size: m.Size, StoreID: m.StoreID}, t0)}}}})
	if err == nil {
		err = res[0].Err
	}
	return err
}

func (f *fixture) vouchers(t *testing.T) snapshots.Vouchers {
	t.Helper()
	head, err := f.w.Log().Head()
	must(t, err)
	v, err := snapshots.ReadVouchers(f.w.Log(), head)
	must(t, err)
	return v
}

func (f *fixture) file(seq uint64, ext string) string {
	return filepath.Join(f.dir, snapshots.DirName, fmt.Sprintf("%020d%s", seq, ext))
}

func TestTakeSealsOnlyWhatTheLogVouchedFor(t *testing.T) {
	f := newFixture(t)
	storeID := f.w.Log().StoreID()
	refused := errors.New("append refused")
	if _, err := f.snap.Take(f.conn, 1, storeID, func(snapshots.Manifest) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("Take with a failing vouch: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.dir, snapshots.DirName)); len(entries) != 0 {
		t.Fatalf("a snapshot the log did not vouch for was kept: %v", entries)
	}
	m, err := f.snap.Take(f.conn, 1, storeID, f.vouch)
	must(t, err)
	got, err := f.snap.Newest(storeID, 10, f.vouchers(t))
	if err != nil || got != m {
		t.Fatalf("Newest = %+v, %v; took %+v", got, err, m)
	}
}

// A snapshot sealed without its event (a log that lost it) is refused as
// snapshot_unvouched; the next older vouched one is used.
func TestNewestRefusesASnapshotWithoutItsEvent(t *testing.T) {
	f := newFixture(t)
	storeID := f.w.Log().StoreID()
	older, err := f.snap.Take(f.conn, 1, storeID, f.vouch)
	must(t, err)
	must(t, sqlitex.ExecuteTransient(f.conn, "INSERT INTO t VALUES ('c')", nil))
	newer, err := f.snap.Take(f.conn, 2, storeID, func(snapshots.Manifest) error { return nil })
	must(t, err)
	v := f.vouchers(t)
	if err := v.Check(newer); !errors.Is(err, snapshots.ErrSnapshotUnvouched) {
		t.Fatalf("Check of the unvouched snapshot: %v", err)
	}
	if got, err := f.snap.Newest(storeID, 10, v); err != nil || got != older {
		t.Fatalf("Newest = %+v, %v; want the older %+v", got, err, older)
	}
	if _, err := f.snap.Newest(storeID, 10, snapshots.Vouchers{}); !errors.Is(err, snapshots.ErrNoSnapshot) {
		t.Fatalf("Newest without any event: %v", err)
	}
}

// The digest binds the file: an event for the same seq with another digest
// does not vouch for it, and a file changed after Verify is caught while
// Restore copies it.
func TestRestoreChecksTheBytesItCopies(t *testing.T) {
	f := newFixture(t)
	storeID := f.w.Log().StoreID()
	m, err := f.snap.Take(f.conn, 1, storeID, f.vouch)
	must(t, err)
	other := m
	other.Hash = "sha256:" + fmt.Sprintf("%064d", 0)
	if err := f.vouchers(t).Check(other); !errors.Is(err, snapshots.ErrSnapshotUnvouched) {
		t.Fatalf("another digest for the same seq: %v", err)
	}
	data, err := os.ReadFile(f.file(1, ".sqlite"))
	must(t, err)
	data[len(data)/2] ^= 0xff
	must(t, os.WriteFile(f.file(1, ".sqlite"), data, 0o600))
	target := filepath.Join(f.dir, "restored.sqlite")
	if err := f.snap.Restore(m, target); !errors.Is(err, snapshots.ErrSnapshotInvalid) {
		t.Fatalf("Restore of a changed file: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused restore left %s: %v", target, err)
	}
}
