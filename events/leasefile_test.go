package events

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

const goodLeaseTOML = `schema = 1
operation = "serve"
acquired_at = 2026-11-30T02:05:24.123Z

[holder]
host = "build-7"
pid = 4242
writer_id = "9f3c2a01b2c3d4e5"
`

func TestI22_LeaseFileHasExactlyFourKeys(t *testing.T) {
	dir := t.TempDir()
	want := LeaseFile{Schema: 1, Operation: "demo", AcquiredAt: t0,
		Holder: LeaseHolder{Host: "h", PID: 7, WriterID: "abc"}}
	must(t, writeLeaseFile(dir, want))
	data, err := os.ReadFile(filepath.Join(dir, LeaseFileName))
	must(t, err)
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		t.Fatal(err)
	}
	holder, _ := raw["holder"].(map[string]any)
	got, err := parseLeaseFile(data)
	must(t, err)
	if got != want {
		t.Fatalf("round trip: %+v != %+v", got, want)
	}
	if st, _ := os.Stat(filepath.Join(dir, LeaseFileName)); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	if len(raw) != 4 || len(holder) != 3 {
		t.Fatalf("want exactly schema, holder{host,pid,writer_id}, operation, acquired_at:\n%s", data)
	}
}

func TestI22_ParseReportsEveryShapeProblem(t *testing.T) {
	cases := map[string]struct{ doc, want string }{
		"unknown key":   {goodLeaseTOML + "owner = \"x\"\n", `unknown key "holder.owner"`},
		"unknown top":   {"owner = 1\n" + goodLeaseTOML, `unknown key "owner"`},
		"missing key":   {strings.Replace(goodLeaseTOML, "operation = \"serve\"\n", "", 1), `missing key "operation"`},
		"missing inner": {strings.Replace(goodLeaseTOML, "pid = 4242\n", "", 1), `missing key "holder.pid"`},
		"wrong type":    {strings.Replace(goodLeaseTOML, "pid = 4242", "pid = \"4242\"", 1), `key "pid" must be a positive integer`},
		"local time":    {strings.Replace(goodLeaseTOML, "02:05:24.123Z", "02:05:24", 1), `must be an offset date-time`},
		"schema 2":      {strings.Replace(goodLeaseTOML, "schema = 1", "schema = 2", 1), "schema 2 is not 1"},
		"holder string": {strings.Replace(goodLeaseTOML, "[holder]\nhost = \"build-7\"\npid = 4242\nwriter_id = \"9f3c2a01b2c3d4e5\"\n", "holder = \"me\"\n", 1), `"holder" must be a table`},
		"not toml":      {"schema = = 1", "not TOML"},
	}
	for name, c := range cases {
		_, err := parseLeaseFile([]byte(c.doc))
		var lfe *LeaseFileError
		if !errors.As(err, &lfe) || !errors.Is(err, ErrLeaseFileInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want mention of %s", name, err, c.want)
		}
	}
	if _, err := parseLeaseFile([]byte(goodLeaseTOML)); err != nil {
		t.Fatalf("good file: %v", err)
	}
}

// FuzzParseLeaseFile: arbitrary bytes never panic; whatever parses
// round-trips through writeLeaseFile unchanged.
func FuzzParseLeaseFile(f *testing.F) {
	f.Add([]byte(goodLeaseTOML))
	f.Add([]byte("schema = 1\n"))
	f.Add([]byte("[holder]\npid = -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lf, err := parseLeaseFile(data)
		if err != nil {
			return
		}
		dir := t.TempDir()
		if err := writeLeaseFile(dir, lf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadLeaseFile(dir)
		if err != nil || !back.AcquiredAt.Equal(lf.AcquiredAt) || back.Holder != lf.Holder || back.Operation != lf.Operation {
			t.Fatalf("round trip %+v -> %+v (%v)", lf, back, err)
		}
	})
}

// leaseFileWithin runs ReadLeaseFile(dir) on another goroutine and fails
// the test if it has not returned within 2 s (it takes microseconds): the
// bugs it guards against are a read that never returns and one that never
// stops (a link to /dev/zero), so the wait is short.
func leaseFileWithin(t *testing.T, dir string, release func()) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := ReadLeaseFile(dir)
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if release != nil {
			release()
		}
		t.Fatal("ReadLeaseFile did not return: it blocked on lease.toml")
		return nil
	}
}

// wantRefused requires a *LeaseFileError (lease_file_invalid) that
// mentions want.
func wantRefused(t *testing.T, err error, want string) {
	t.Helper()
	var lfe *LeaseFileError
	if !errors.As(err, &lfe) || !errors.Is(err, ErrLeaseFileInvalid) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want a lease_file_invalid error mentioning %q", err, want)
	}
}

// openWriterWithin opens a writer on dir on another goroutine, failing
// the test if the open has not returned within a few seconds.
func openWriterWithin(t *testing.T, dir string) *Writer {
	t.Helper()
	type res struct {
		w   *Writer
		err error
	}
	done := make(chan res, 1)
	go func() {
		w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
		done <- res{w, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	select {
	case r := <-done:
		must(t, r.err)
		t.Cleanup(func() { r.w.Close() })
		return r.w
	case <-ctx.Done():
		t.Fatal("OpenWriter did not return: it blocked on lease.toml")
		return nil
	}
}

// movedAside returns the single lease.toml.invalid-* entry of dir.
func movedAside(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, LeaseFileName+".invalid-*"))
	must(t, err)
	if len(m) != 1 {
		t.Fatalf("moved-aside files: %v, want exactly one", m)
	}
	return m[0]
}

// storeDir returns a directory holding a closed store (lease.toml absent).
func storeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{HeartbeatInterval: -1})
	must(t, err)
	must(t, w.Close())
	return dir
}

func TestRepro7_FIFOLeaseFileIsRefusedWithoutHanging(t *testing.T) {
	dir := storeDir(t)
	path := filepath.Join(dir, LeaseFileName)
	must(t, syscall.Mkfifo(path, 0o600))
	release := func() { // lets a blocked open return, so a regression fails instead of hanging
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	wantRefused(t, leaseFileWithin(t, dir, release), "is a FIFO, not a regular file")

	// Open moves the FIFO aside (a rename, never a read) and writes its own lease.toml.
	w := openWriterWithin(t, dir)
	st, err := os.Lstat(movedAside(t, dir))
	must(t, err)
	if st.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("moved-aside file is %v, want the FIFO itself", st.Mode())
	}
	lf, err := ReadLeaseFile(dir)
	if err != nil || lf.Holder.PID != int64(os.Getpid()) || w.Lease().Epoch == 0 {
		t.Fatalf("after open: %+v, %v", lf, err)
	}
}

func TestRepro7_SymlinkToDevZeroIsNeverFollowed(t *testing.T) {
	dir := storeDir(t)
	must(t, os.Symlink("/dev/zero", filepath.Join(dir, LeaseFileName)))
	wantRefused(t, leaseFileWithin(t, dir, nil), "is a symbolic link, not a regular file")

	// A link to a perfectly valid lease file is refused too: links are never followed.
	other := t.TempDir()
	must(t, os.WriteFile(filepath.Join(other, "real.toml"), []byte(goodLeaseTOML), 0o600))
	linked := t.TempDir()
	must(t, os.Symlink(filepath.Join(other, "real.toml"), filepath.Join(linked, LeaseFileName)))
	wantRefused(t, leaseFileWithin(t, linked, nil), "symbolic link")

	openWriterWithin(t, dir)
	st, err := os.Lstat(movedAside(t, dir))
	must(t, err)
	if st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("moved-aside file is %v, want the link itself", st.Mode())
	}
	if st, err := os.Lstat(filepath.Join(dir, LeaseFileName)); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("lease.toml after open: %v %v", st, err)
	}
}

func TestRepro7_DeviceLeaseFileIsRefused(t *testing.T) {
	st, err := os.Stat("/dev/zero") // what a device node at lease.toml would show
	must(t, err)
	wantRefused(t, regularWithin(st, MaxLeaseFileSize), "is a device, not a regular file")
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, LeaseFileName), 0o700))
	wantRefused(t, leaseFileWithin(t, dir, nil), "is a directory")
}

func TestRepro7_OversizedLeaseFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LeaseFileName)
	padded := goodLeaseTOML + "#" + strings.Repeat("x", MaxLeaseFileSize-len(goodLeaseTOML)-2) + "\n"
	must(t, os.WriteFile(path, []byte(padded), 0o600))
	if _, err := ReadLeaseFile(dir); err != nil { // exactly at the cap is fine
		t.Fatalf("a %d-byte lease.toml: %v", len(padded), err)
	}
	must(t, os.WriteFile(path, []byte(padded+"#"), 0o600))
	wantRefused(t, leaseFileWithin(t, dir, nil), "larger than 65536 bytes")

	// A 16 GiB sparse file is refused from its size, without reading it.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	must(t, f.Truncate(16<<30))
	must(t, f.Close())
	wantRefused(t, leaseFileWithin(t, dir, nil), "larger than")
}

func TestRepro7_WriteReplacesAPlantedSymlinkWithoutWritingThroughIt(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	victim := filepath.Join(elsewhere, "victim")
	must(t, os.WriteFile(victim, []byte("precious"), 0o644))
	must(t, os.Symlink(victim, filepath.Join(dir, LeaseFileName)))
	want := LeaseFile{Schema: 1, Operation: "demo", AcquiredAt: t0, Holder: LeaseHolder{Host: "h", PID: 7, WriterID: "abc"}}
	must(t, writeLeaseFile(dir, want))
	if data, err := os.ReadFile(victim); err != nil || string(data) != "precious" {
		t.Fatalf("the link's target was written: %q %v", data, err)
	}
	st, err := os.Lstat(filepath.Join(dir, LeaseFileName))
	must(t, err)
	if !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("lease.toml is %v", st.Mode())
	}
	if got, err := ReadLeaseFile(dir); err != nil || got != want {
		t.Fatalf("read back %+v, %v", got, err)
	}
	// Removing a planted link removes the link, never its target.
	must(t, os.Remove(filepath.Join(dir, LeaseFileName)))
	must(t, os.Symlink(victim, filepath.Join(dir, LeaseFileName)))
	must(t, removeLeaseFile(dir))
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("removeLeaseFile removed the link's target: %v", err)
	}
}
