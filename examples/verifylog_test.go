package examples_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// damagedCopy copies the log at src into a new file, runs fn on it with
// bbolt, and returns the copy's path.
func damagedCopy(t *testing.T, src string, fn func(tx *bolt.Tx) error) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), events.LogFileName)
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(dst, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	return dst
}

// The verifylog example refuses a log whose last record was removed (its
// head left as it was), a key that is no sequence, and a file that is not
// a store's log, each with exit 1 and a message, never a panic.
func TestVerifyLogExampleRefusesDamageWithoutPanicking(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	runProgram(t, build(t, "localonly"), nil, "-dir", dir)
	src := filepath.Join(dir, events.LogFileName)
	bin := build(t, "verifylog")
	cases := map[string]struct {
		fn   func(tx *bolt.Tx) error
		want string
	}{
		"last record removed": {func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("events")).Delete(tx.Bucket([]byte("meta")).Get([]byte("head")))
		}, "the log's head is"},
		"a key of 3 bytes": {func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("events")).Put([]byte("xyz"), []byte("junk"))
		}, "a key of 3 bytes"},
		"no buckets": {func(tx *bolt.Tx) error {
			if err := tx.DeleteBucket([]byte("meta")); err != nil {
				return err
			}
			return tx.DeleteBucket([]byte("events"))
		}, "not a store's log"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := exec.CommandContext(t.Context(), bin, "-log", damagedCopy(t, src, c.fn)).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "panic") {
				t.Fatalf("verifylog: %v, want exit 1 naming %q:\n%s", err, c.want, out)
			}
		})
	}
}

// A hole a salvage recorded restarts the chain, so verifylog refuses it
// like audit verify does; -accept-salvage-holes prints the hole and the
// same head as Store.Verify with holes accepted.
func TestVerifyLogExampleRefusesASalvageHoleUnlessAccepted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	runProgram(t, build(t, "localonly"), nil, "-dir", dir)
	holed := damagedCopy(t, filepath.Join(dir, events.LogFileName), func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("events")).Delete([]byte{0, 0, 0, 0, 0, 0, 0, 3}); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("salvage_lost"), []byte("3"))
	})
	bin := build(t, "verifylog")
	out, err := exec.CommandContext(t.Context(), bin, "-log", holed).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "seq 3: lost to a salvage") {
		t.Fatalf("verifylog of a log with a hole: %v, want exit 1:\n%s", err, out)
	}
	store := filepath.Join(t.TempDir(), "holed")
	if err := os.MkdirAll(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(holed, filepath.Join(store, events.LogFileName)); err != nil {
		t.Fatal(err)
	}
	rep, err := hikoutei.VerifyDir(t.Context(), store, hikoutei.VerifyOptions{AcceptSalvageHoles: true})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("salvage hole: seq 3 lost; the chain restarts at seq 4\nverified %d records\nhead %d:%s\n", rep.Records, rep.Head, rep.HeadHash)
	if got := runProgram(t, bin, nil, "-log", filepath.Join(store, events.LogFileName), "-accept-salvage-holes"); got != want {
		t.Fatalf("verifylog -accept-salvage-holes printed\n%s\nwant\n%s", got, want)
	}
}

// F4: a pin taken before a salvage hole never vouches for the log after
// it, in verifylog as in audit verify: the red team's forged hole (one
// record deleted and named in salvage_lost, nothing re-linked) with a pin
// taken before fails with -accept-salvage-holes; once the store recorded
// the hole (integrity.holes_recorded), a head pinned after that record
// vouches, and the old pin still fails.
func TestF4_VerifyLogRefusesAPinTakenBeforeASalvageHole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	runProgram(t, build(t, "localonly"), nil, "-dir", dir)
	before, err := hikoutei.VerifyDir(t.Context(), dir, hikoutei.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldPin := fmt.Sprintf("%d:%s", before.Head, before.HeadHash)
	holed := damagedCopy(t, filepath.Join(dir, events.LogFileName), func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("events")).Delete([]byte{0, 0, 0, 0, 0, 0, 0, 3}); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("salvage_lost"), []byte("3"))
	})
	bin := build(t, "verifylog")
	refused := func(log, pin string) {
		t.Helper()
		for _, p := range []string{pin, fmt.Sprintf("0:%s", before.Genesis)} {
			out, err := exec.CommandContext(t.Context(), bin, "-log", log, "-accept-salvage-holes", "-pin", p).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "the pin predates salvage hole 3") {
				t.Fatalf("verifylog -pin %s of a log with a hole: %v, want exit 1:\n%s", p, err, out)
			}
		}
	}
	refused(holed, oldPin)

	store := filepath.Join(t.TempDir(), "holed")
	if err := os.MkdirAll(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(holed, filepath.Join(store, events.LogFileName)); err != nil {
		t.Fatal(err)
	}
	w, err := events.OpenWriter(store, events.WriterOptions{AcquireWait: -1, HeartbeatInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	holes, err := w.Log().UnrecordedHoles()
	if err == nil {
		_, err = w.Append(events.Unit{Streams: []events.StreamAppend{{Stream: events.IntegrityStream, ExpectedVersion: events.AnyVersion,
			Events: []events.Event{{Payload: events.HolesRecorded{Lost: holes.String()}}}}}})
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(store, events.LogFileName)
	refused(log, oldPin)
	after, err := hikoutei.VerifyDir(t.Context(), store, hikoutei.VerifyOptions{AcceptSalvageHoles: true})
	if err != nil {
		t.Fatal(err)
	}
	got := runProgram(t, bin, nil, "-log", log, "-accept-salvage-holes", "-pin", fmt.Sprintf("%d:%s", after.Head, after.HeadHash))
	if !strings.Contains(got, "salvage hole: seq 3 lost; the chain restarts at seq 4; recorded at seq") ||
		!strings.Contains(got, fmt.Sprintf("head %d:%s", after.Head, after.HeadHash)) {
		t.Fatalf("verifylog with a head pinned after the recorded hole printed\n%s", got)
	}
}
