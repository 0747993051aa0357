package events

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// LeaseFileName is the file, in the store directory, that exists only while
// a writer holds the store (I22).
const LeaseFileName = "lease.toml"

// LeaseFileSchema is the schema value this build writes and accepts.
const LeaseFileSchema = 1

// MaxLeaseFileSize caps what ReadLeaseFile reads: a valid lease.toml is
// about 150 bytes, so anything larger than 64 KiB is refused unread.
const MaxLeaseFileSize = 64 << 10

// LeaseFile is the closed four-key shape of lease.toml (I22):
//
//	schema      = 1
//	operation   = "serve"
//	acquired_at = 2026-11-30T02:05:24.123Z   # TOML offset date-time, UTC
//	[holder]
//	host      = "build-7"
//	pid       = 4242
//	writer_id = "9f3c2a…"
type LeaseFile struct {
	Schema     int64       `toml:"schema"`
	Holder     LeaseHolder `toml:"holder"`
	Operation  string      `toml:"operation"`
	AcquiredAt time.Time   `toml:"acquired_at"`
}

// LeaseHolder identifies the process holding the store.
type LeaseHolder struct {
	Host     string `toml:"host"`
	PID      int64  `toml:"pid"`
	WriterID string `toml:"writer_id"`
}

// String renders the holder for error messages: "host H pid P writer W".
func (h LeaseHolder) String() string {
	return fmt.Sprintf("host %s pid %d writer %s", h.Host, h.PID, h.WriterID)
}

// LeaseFileError lists every way a lease.toml departs from the closed shape.
// It wraps ErrLeaseFileInvalid.
type LeaseFileError struct {
	Problems []string // e.g. `unknown key "owner"`, `missing key "operation"`
}

func (e *LeaseFileError) Error() string {
	return fmt.Sprintf("%s: %s", ErrLeaseFileInvalid, strings.Join(e.Problems, "; "))
}

// Unwrap returns ErrLeaseFileInvalid.
func (e *LeaseFileError) Unwrap() error { return ErrLeaseFileInvalid }

// parseLeaseFile validates data against the closed shape and decodes it.
// Errors: *LeaseFileError (ErrLeaseFileInvalid) listing unknown keys, missing
// keys, wrong types, a wrong schema or empty required strings.
func parseLeaseFile(data []byte) (LeaseFile, error) {
	var raw map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&raw); err != nil {
		return LeaseFile{}, &LeaseFileError{Problems: []string{"not TOML: " + firstLine(err.Error())}}
	}
	var lf LeaseFile
	var p []string
	p = checkKeys(p, "", raw, "schema", "holder", "operation", "acquired_at")
	lf.Schema, p = takeInt(p, raw, "schema")
	lf.Operation, p = takeString(p, raw, "operation")
	lf.AcquiredAt, p = takeTime(p, raw, "acquired_at")
	if h, ok := raw["holder"].(map[string]any); ok {
		p = checkKeys(p, "holder.", h, "host", "pid", "writer_id")
		lf.Holder.Host, p = takeString(p, h, "host")
		lf.Holder.PID, p = takeInt(p, h, "pid")
		lf.Holder.WriterID, p = takeString(p, h, "writer_id")
	} else if _, present := raw["holder"]; present {
		p = append(p, `key "holder" must be a table with host, pid, writer_id`)
	}
	if _, ok := raw["schema"].(int64); ok && lf.Schema != LeaseFileSchema {
		p = append(p, fmt.Sprintf("schema %d is not %d", lf.Schema, LeaseFileSchema))
	}
	if len(p) > 0 {
		return lf, &LeaseFileError{Problems: p}
	}
	return lf, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func checkKeys(p []string, prefix string, m map[string]any, want ...string) []string {
	allowed := map[string]bool{}
	for _, k := range want {
		allowed[k] = true
		if _, ok := m[k]; !ok {
			p = append(p, fmt.Sprintf("missing key %q", prefix+k))
		}
	}
	var unknown []string
	for k := range m {
		if !allowed[k] {
			unknown = append(unknown, fmt.Sprintf("unknown key %q", prefix+k))
		}
	}
	sort.Strings(unknown)
	return append(p, unknown...)
}

func takeString(p []string, m map[string]any, k string) (string, []string) {
	v, present := m[k]
	s, ok := v.(string)
	if present && (!ok || s == "") {
		p = append(p, fmt.Sprintf("key %q must be a non-empty string", k))
	}
	return s, p
}

func takeInt(p []string, m map[string]any, k string) (int64, []string) {
	v, present := m[k]
	i, ok := v.(int64)
	if present && (!ok || i <= 0) {
		p = append(p, fmt.Sprintf("key %q must be a positive integer", k))
	}
	return i, p
}

func takeTime(p []string, m map[string]any, k string) (time.Time, []string) {
	v, present := m[k]
	t, ok := v.(time.Time)
	if present && (!ok || isLocalTOMLTime(t)) {
		p = append(p, fmt.Sprintf("key %q must be an offset date-time", k))
	}
	return t.UTC(), p
}

// isLocalTOMLTime reports a TOML local date/time (no offset): the TOML
// decoder marks those with zones named "datetime-local", "date-local" and
// "time-local".
func isLocalTOMLTime(t time.Time) bool {
	return strings.HasSuffix(t.Location().String(), "-local")
}

// ReadLeaseFile reads and validates dir/lease.toml. It returns
// fs.ErrNotExist (wrapped) when the file is absent, *LeaseFileError when it
// is malformed or is not a regular file of at most MaxLeaseFileSize bytes:
// a symbolic link is never followed, and a FIFO, device, socket or
// directory is never read (so a planted lease.toml cannot hang or exhaust
// doctor, status or Open).
func ReadLeaseFile(dir string) (LeaseFile, error) {
	data, err := readRegularFile(filepath.Join(dir, LeaseFileName), MaxLeaseFileSize)
	if err != nil {
		return LeaseFile{}, err
	}
	return parseLeaseFile(data)
}

// readRegularFile reads path when it is a regular file of at most limit
// bytes. It looks before it opens (Lstat: a link or special file is
// refused unopened), opens without following a link and without blocking
// (O_NOFOLLOW|O_NONBLOCK: a swap after the look cannot hang the open),
// checks the opened file is the one it looked at, and reads at most
// limit+1 bytes. Errors: fs.ErrNotExist (wrapped), *LeaseFileError for a
// file it refuses, other I/O errors.
func readRegularFile(path string, limit int64) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := regularWithin(st, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|noFollowOpen, 0)
	if err != nil {
		return nil, refusedOpen(path, err)
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regularWithin(fst, limit); err != nil {
		return nil, err
	}
	if !os.SameFile(st, fst) {
		return nil, &LeaseFileError{Problems: []string{"replaced while being opened: not read"}}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(limit)
	}
	return data, nil
}

// regularWithin refuses anything but a regular file of at most limit bytes.
func regularWithin(st fs.FileInfo, limit int64) error {
	if kind := FileKind(st.Mode()); kind != "" {
		return &LeaseFileError{Problems: []string{"is a " + kind + ", not a regular file: not read"}}
	}
	if st.Size() > limit {
		return tooLarge(limit)
	}
	return nil
}

func tooLarge(limit int64) error {
	return &LeaseFileError{Problems: []string{fmt.Sprintf("larger than %d bytes: not read", limit)}}
}

// FileKind names a non-regular file type ("" for a regular file), as
// messages about a store file that is not a file say it.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// refusedOpen maps the open's refusal of a link swapped in after Lstat
// (ELOOP on Linux; other systems use other errnos, hence the second look)
// to *LeaseFileError.
func refusedOpen(path string, err error) error {
	if st, lerr := os.Lstat(path); lerr == nil && !st.Mode().IsRegular() {
		return regularWithin(st, 0)
	}
	if errors.Is(err, syscall.ELOOP) {
		return &LeaseFileError{Problems: []string{"is a symbolic link, not a regular file: not read"}}
	}
	return err
}

// writeLeaseFile writes dir/lease.toml atomically: a 0600 temp file in dir
// (created exclusively under a random name), fsync, rename over the target,
// fsync of the directory. The rename replaces whatever lease.toml is (a
// planted symbolic link included) and never writes through it.
func writeLeaseFile(dir string, lf LeaseFile) error {
	var buf bytes.Buffer
	lf.AcquiredAt = lf.AcquiredAt.UTC()
	if err := toml.NewEncoder(&buf).Encode(lf); err != nil {
		return fmt.Errorf("encode lease.toml: %w", err)
	}
	return writeFileAtomic(dir, LeaseFileName, buf.Bytes())
}

// removeLeaseFile deletes dir/lease.toml; an absent file is not an error.
func removeLeaseFile(dir string) error {
	err := os.Remove(filepath.Join(dir, LeaseFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(dir)
}

func writeFileAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := writeSyncClose(f, data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := failpoint.Err(failpoint.LeaseFileBeforeRename); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

func writeSyncClose(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
