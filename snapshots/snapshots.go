// Package snapshots keeps copies of the read model — which also holds the
// aggregate state the writer decides against — taken at a log sequence N.
// Restart = newest valid snapshot + replay of the log tail after N.
//
// A snapshot is vouched for by the log, not by the file beside it: Take
// hands the snapshot's SHA-256 to the caller, which appends a
// snapshot.taken event carrying it before the snapshot is sealed, and a
// snapshot is restored only when its file's digest equals the digest of
// such an event (Vouchers). A snapshot whose file does not match its
// manifest, or that no event vouches for (changed after it was taken, its
// manifest re-hashed), is skipped with a warning and the next older one
// (or a rebuild from zero) is used instead.
//
// Layout, in <store>/snapshots/:
//
//	00000000000000012345.sqlite   the read model at checkpoint 12345 (VACUUM INTO)
//	00000000000000012345.json     manifest: {seq, store_id, size, hash}
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package snapshots

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// DirName is the snapshots folder inside a store directory.
const DirName = "snapshots"

// DefaultKeep is how many snapshots are retained when Keep is not set.
const DefaultKeep = 3

// Manifest describes one snapshot file.
type Manifest struct {
	Seq     uint64 `json:"seq"`      // log sequence the snapshot includes
	StoreID string `json:"store_id"` // the log's store id
	Size    int64  `json:"size"`     // bytes of the .sqlite file
	Hash    string `json:"hash"`     // "sha256:" + hex SHA-256 of the .sqlite file
}

// Dir manages the snapshots of one store.
type Dir struct {
	path string
	keep int
	log  *slog.Logger
}

// Open returns the snapshot folder under storeDir, creating it (0700).
// keep <= 0 means DefaultKeep.
func Open(storeDir string, keep int, logger *slog.Logger) (*Dir, error) {
	if keep <= 0 {
		keep = DefaultKeep
	}
	if logger == nil {
		logger = slog.Default()
	}
	p := filepath.Join(storeDir, DirName)
	if err := os.MkdirAll(p, 0o700); err != nil {
		return nil, fmt.Errorf("create snapshot dir: %w", err)
	}
	d := &Dir{path: p, keep: keep, log: logger}
	return d, d.removeIncomplete()
}

// removeIncomplete deletes what a crash in Take left behind: temp files and
// a .sqlite whose manifest (written last) never landed. The store holds its
// writer lease when it opens the folder, so no Take is in flight.
func (d *Dir) removeIncomplete() error {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		base, isSnap := strings.CutSuffix(name, ".sqlite")
		_, manifestErr := os.Stat(filepath.Join(d.path, base+".json"))
		if strings.HasSuffix(name, ".tmp") || isSnap && manifestErr != nil {
			d.log.Info("removing an incomplete snapshot file", "file", name)
			errs = append(errs, os.Remove(filepath.Join(d.path, name)))
		}
	}
	return errors.Join(errs...)
}

func (d *Dir) file(seq uint64, ext string) string {
	return filepath.Join(d.path, fmt.Sprintf("%020d%s", seq, ext))
}

// Take writes a snapshot of the database open on conn (which must be at
// checkpoint seq and outside a transaction) with VACUUM INTO and hashes
// it; vouch then records its manifest (Hash: the file's SHA-256) in the
// log. Only after vouch returned nil is the file moved into place and the
// manifest written, last (a snapshot without a manifest is incomplete and
// ignored); then it prunes to the newest Keep. When vouch fails nothing is
// kept and its error is returned.
func (d *Dir) Take(conn *sqlite.Conn, seq uint64, storeID string, vouch func(Manifest) error) (Manifest, error) {
	tmp := d.file(seq, ".sqlite.tmp")
	os.Remove(tmp)
	if err := sqlitex.ExecuteTransient(conn, "VACUUM INTO ?", &sqlitex.ExecOptions{Args: []any{tmp}}); err != nil {
		return Manifest{}, fmt.Errorf("vacuum into snapshot: %w", err)
	}
	m, err := d.hashTemp(tmp, seq, storeID)
	if err == nil {
		err = vouch(m)
	}
	if err == nil {
		err = d.seal(tmp, m)
	}
	if err != nil {
		os.Remove(tmp)
		return Manifest{}, err
	}
	return m, d.prune()
}

// hashTemp makes the temp file private and durable and returns its manifest.
func (d *Dir) hashTemp(tmp string, seq uint64, storeID string) (Manifest, error) {
	if err := os.Chmod(tmp, 0o600); err != nil {
		return Manifest{}, err
	}
	size, hash, err := hashFile(tmp)
	if err != nil {
		return Manifest{}, err
	}
	return Manifest{Seq: seq, StoreID: storeID, Size: size, Hash: hash}, syncFile(tmp)
}

// seal moves the vouched temp file into place and writes its manifest.
func (d *Dir) seal(tmp string, m Manifest) error {
	if err := os.Rename(tmp, d.file(m.Seq, ".sqlite")); err != nil {
		return err
	}
	if err := failpoint.Err(failpoint.SnapshotBeforeManifest); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	return writeAtomic(d.file(m.Seq, ".json"), data)
}

func hashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return n, digestOf(h), err
}

// digestOf renders a SHA-256 as manifests and snapshot.taken events carry it.
func digestOf(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// List returns the sequences that have a manifest, newest first.
func (d *Dir) List() ([]uint64, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if seq, err := strconv.ParseUint(name, 10, 64); ok && err == nil {
			seqs = append(seqs, seq)
		}
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] > seqs[j] })
	return seqs, nil
}

// Verify checks the snapshot at seq against its manifest and storeID.
// Errors: ErrSnapshotInvalid.
func (d *Dir) Verify(seq uint64, storeID string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(d.file(seq, ".json"))
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		return m, fmt.Errorf("%w: %d: manifest: %w", ErrSnapshotInvalid, seq, err)
	}
	size, hash, err := hashFile(d.file(seq, ".sqlite"))
	switch {
	case err != nil:
		return m, fmt.Errorf("%w: %d: %w", ErrSnapshotInvalid, seq, err)
	case m.Seq != seq || m.StoreID != storeID:
		return m, fmt.Errorf("%w: %d: manifest names seq %d store %s", ErrSnapshotInvalid, seq, m.Seq, m.StoreID)
	case size != m.Size || hash != m.Hash:
		return m, fmt.Errorf("%w: %d: file hash %s does not match manifest %s", ErrSnapshotInvalid, seq, hash, m.Hash)
	}
	return m, nil
}

// Newest returns the newest snapshot with Seq <= maxSeq that matches its
// manifest and that v vouches for; the others are logged as warnings and
// skipped. Errors: ErrNoSnapshot.
func (d *Dir) Newest(storeID string, maxSeq uint64, v Vouchers) (Manifest, error) {
	return d.NewestIn(storeID, 0, maxSeq, v)
}

// NewestIn is Newest among the snapshots with minSeq <= Seq <= maxSeq:
// those taken before minSeq (e.g. before the entity shapes last changed,
// so in other shapes) are skipped without a warning.
func (d *Dir) NewestIn(storeID string, minSeq, maxSeq uint64, v Vouchers) (Manifest, error) {
	seqs, err := d.List()
	if err != nil {
		return Manifest{}, err
	}
	for _, seq := range seqs {
		if seq > maxSeq || seq < minSeq {
			continue
		}
		m, err := d.Verify(seq, storeID)
		if err == nil {
			err = v.Check(m)
		}
		if err == nil {
			return m, nil
		}
		d.log.Warn("skipping invalid snapshot", "seq", seq, "reason", err.Error())
	}
	return Manifest{}, ErrNoSnapshot
}

// Restore copies the snapshot m to target (mode 0600), replacing it, and
// checks that the bytes it copied are the ones m describes (the file may
// have changed since it was verified). Errors: ErrSnapshotInvalid.
func (d *Dir) Restore(m Manifest, target string) error {
	src, err := os.Open(d.file(m.Seq, ".sqlite"))
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := target + ".restore"
	dst, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(dst, h), src)
	if err == nil && digestOf(h) != m.Hash {
		err = fmt.Errorf("%w: %d: the file changed while it was restored", ErrSnapshotInvalid, m.Seq)
	}
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, target)
}

// prune deletes all but the newest Keep snapshots (manifest first, so a
// half-deleted snapshot is never mistaken for a valid one).
func (d *Dir) prune() error {
	seqs, err := d.List()
	if err != nil || len(seqs) <= d.keep {
		return err
	}
	var errs []error
	for _, seq := range seqs[d.keep:] {
		errs = append(errs, os.Remove(d.file(seq, ".json")), os.Remove(d.file(seq, ".sqlite")))
	}
	return errors.Join(errs...)
}
