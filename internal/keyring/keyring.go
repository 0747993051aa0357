package keyring

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// File is the key file's name in a store directory.
const File = "keys.db"

// Digest is a subject's keyed digest: the first 16 bytes of an HMAC-SHA256
// of the subject under the key file's secret.
type Digest [16]byte

// String is the digest in 32 hex digits (what subject.erased records).
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// ParseDigest reads a digest's String.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(d) {
		return d, fmt.Errorf("%w: subject digest %q", ErrSealedValueMalformed, s)
	}
	copy(d[:], b)
	return d, nil
}

// live is a subject's current data key and its generation.
type live struct {
	gen uint32
	key [32]byte
}

// Ring is an open key file. Safe for concurrent use.
type Ring struct {
	mu       sync.RWMutex
	path     string
	readOnly bool
	db       *bolt.DB
	id       [8]byte
	secret   [32]byte
	keys     map[Digest]live
	erased   map[Digest]uint32   // highest destroyed generation
	pending  map[Digest]string   // erasures asked for and not yet finished → by whom
	personal map[string][]string // entity → its personal fields (SetPersonal)
	cmu      sync.Mutex          // guards ciphers (taken inside mu, never around it)
	ciphers  map[Digest]derived  // derived ciphers of live keys (ciphers.go)
}

var (
	bucketMeta    = []byte("meta")
	bucketKeys    = []byte("keys")
	bucketErased  = []byte("erased")
	bucketPending = []byte("pending")
)

// Open opens the key file at path (DIR/keys.db), creating it (0600, with
// a fresh id and secret) when create is set. A missing file without
// create is fs.ErrNotExist. A symbolic link, a file others can read or a
// truncated file is refused (checkFile). Errors: ErrKeyFile.
func Open(path string, create bool) (*Ring, error) {
	if err := checkFile(path); err != nil && (!errors.Is(err, fs.ErrNotExist) || !create) {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %w", ErrKeyFile, filepath.Base(path), err)
	}
	r := &Ring{path: path, db: db}
	if err := r.initAndLoad(); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return r, nil
}

// OpenReadOnly opens an existing key file without writing it (tools that
// read a closed store). Errors: fs.ErrNotExist, ErrKeyFile.
func OpenReadOnly(path string) (*Ring, error) { return openReadOnly(path, time.Second) }

// OpenReadOnlyNoWait is OpenReadOnly failing at once (Busy) when another
// process holds the key file open for writing (a store opening masks its
// read model's catch-up with it, before the store's lease is known).
func OpenReadOnlyNoWait(path string) (*Ring, error) { return openReadOnly(path, 10*time.Millisecond) }

func openReadOnly(path string, wait time.Duration) (*Ring, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && st.Size() == 0 {
		// created, then killed before bbolt wrote its first pages (a
		// read-only open would try to write them: EBADF)
		return nil, fmt.Errorf("%w: %s is empty: %w", ErrKeyFile, filepath.Base(path), errNoIdentity)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: wait, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %w", ErrKeyFile, filepath.Base(path), err)
	}
	r := &Ring{path: path, db: db, readOnly: true}
	if err := r.load(); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return r, nil
}

// errNoIdentity: the file has no id and secret yet (created, then killed
// before its first transaction: no key was ever stored in it).
var errNoIdentity = errors.New("no id or secret")

// Uninitialised reports whether err is OpenReadOnly's failure on a key
// file that never got its identity (Open with create gives it one).
func Uninitialised(err error) bool { return errors.Is(err, errNoIdentity) }

// Busy reports whether err is Open's or OpenReadOnly's failure to lock a
// key file another process holds open for writing (a running store).
func Busy(err error) bool { return errors.Is(err, bolterrors.ErrTimeout) }

// initAndLoad gives a new file its id and secret, then loads it.
func (r *Ring) initAndLoad() error {
	err := r.db.Update(func(tx *bolt.Tx) error {
		m, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		for _, b := range [][]byte{bucketKeys, bucketErased, bucketPending, bucketPersonal} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if m.Get([]byte("id")) != nil {
			return nil
		}
		var id [8]byte
		var secret [32]byte
		rand.Read(id[:])
		rand.Read(secret[:])
		return errors.Join(m.Put([]byte("id"), id[:]), m.Put([]byte("secret"), secret[:]), m.Put([]byte("format"), []byte("1")))
	})
	if err != nil {
		return fmt.Errorf("%w: initialise: %w", ErrKeyFile, err)
	}
	return r.load()
}

// load reads the whole file into memory.
func (r *Ring) load() error {
	r.keys, r.erased, r.pending = map[Digest]live{}, map[Digest]uint32{}, map[Digest]string{}
	err := r.db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil || len(m.Get([]byte("id"))) != 8 || len(m.Get([]byte("secret"))) != 32 {
			return errNoIdentity
		}
		copy(r.id[:], m.Get([]byte("id")))
		copy(r.secret[:], m.Get([]byte("secret")))
		return errors.Join(r.loadKeys(tx), r.loadErased(tx), r.loadPending(tx), r.loadPersonal(tx))
	})
	if err != nil {
		return fmt.Errorf("%w: read %s: %w", ErrKeyFile, filepath.Base(r.path), err)
	}
	return nil
}

func (r *Ring) loadKeys(tx *bolt.Tx) error {
	return forEach(tx, bucketKeys, func(d Digest, v []byte) error {
		if len(v) != 36 {
			return fmt.Errorf("key of %s: %d bytes", d, len(v))
		}
		l := live{gen: binary.BigEndian.Uint32(v)}
		copy(l.key[:], v[4:])
		r.keys[d] = l
		return nil
	})
}

func (r *Ring) loadErased(tx *bolt.Tx) error {
	return forEach(tx, bucketErased, func(d Digest, v []byte) error {
		if len(v) != 4 {
			return fmt.Errorf("erasure of %s: %d bytes", d, len(v))
		}
		r.erased[d] = binary.BigEndian.Uint32(v)
		return nil
	})
}

func (r *Ring) loadPending(tx *bolt.Tx) error {
	return forEach(tx, bucketPending, func(d Digest, v []byte) error {
		r.pending[d] = string(v)
		return nil
	})
}

func forEach(tx *bolt.Tx, bucket []byte, fn func(Digest, []byte) error) error {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		var d Digest
		if len(k) != len(d) {
			return fmt.Errorf("%s: a key of %d bytes", bucket, len(k))
		}
		copy(d[:], k)
		return fn(d, v)
	})
}

// Close closes the file.
func (r *Ring) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.db == nil {
		return nil
	}
	err := r.db.Close()
	r.db = nil
	r.cmu.Lock()
	r.ciphers = nil // no derived key outlives the file
	r.cmu.Unlock()
	return err
}

// Digest is subject's keyed digest in this key file.
func (r *Ring) Digest(subject string) Digest {
	m := hmac.New(sha256.New, r.secret[:])
	m.Write([]byte("hikoutei.subject.v1\x00"))
	m.Write([]byte(subject))
	var d Digest
	copy(d[:], m.Sum(nil))
	return d
}

// Ensure gives every subject of ds without a live key a new random key
// (its generation one past the last destroyed one), durably (one fsynced
// transaction) before it returns, and lists the subjects it gave a key
// (which a replicated primary grants to its standbys). Errors: ErrKeyFile.
func (r *Ring) Ensure(ds []Digest) ([]Digest, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh := map[Digest]live{}
	for _, d := range ds {
		if _, ok := r.keys[d]; ok {
			continue
		}
		l := live{gen: r.erased[d] + 1}
		rand.Read(l.key[:])
		fresh[d] = l
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	if err := r.writable(); err != nil {
		return nil, err
	}
	err := r.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKeys)
		for d, l := range fresh {
			if err := b.Put(d[:], l.bytes()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: store a subject key: %w", ErrKeyFile, err)
	}
	out := make([]Digest, 0, len(fresh))
	for d, l := range fresh {
		r.keys[d] = l
		out = append(out, d)
	}
	sortDigests(out)
	return out, nil
}

func (l live) bytes() []byte {
	out := binary.BigEndian.AppendUint32(nil, l.gen)
	return append(out, l.key[:]...)
}

func (r *Ring) writable() error {
	switch {
	case r.db == nil:
		return fmt.Errorf("%w: closed", ErrKeyFile)
	case r.readOnly:
		return fmt.Errorf("%w: opened read-only", ErrKeyFile)
	}
	return nil
}
