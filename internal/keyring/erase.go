package keyring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// MarkPending records, durably, that d is to be erased at the request of
// by (the actor its event records): a crash before Destroy finishes
// leaves the mark, and the store finishes the erasure when it opens
// (Pending, PendingBy). Errors: ErrKeyFile.
func (r *Ring) MarkPending(d Digest, by string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writable(); err != nil {
		return err
	}
	err := r.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketPending).Put(d[:], []byte(by)) })
	if err != nil {
		return fmt.Errorf("%w: mark an erasure: %w", ErrKeyFile, err)
	}
	r.pending[d] = by
	return nil
}

// PendingBy is who asked for the pending erasure of d ("": a mark made by
// an earlier build, which did not record it).
func (r *Ring) PendingBy(d Digest) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.pending[d]
}

// Pending lists the erasures asked for and not finished, in digest order.
func (r *Ring) Pending() []Digest {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Digest, 0, len(r.pending))
	for d := range r.pending {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i][:]) < string(out[j][:]) })
	return out
}

// Generation is the generation Destroy would destroy for d: its live
// key's, or (no live key) the last one destroyed.
func (r *Ring) Generation(d Digest) uint32 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if l, ok := r.keys[d]; ok {
		return l.gen
	}
	return r.erased[d]
}

// Destroy destroys d's live key (if it has one), records its generation
// as erased (generation 0 for a subject without a key, so that WasErased
// knows it) and clears d's pending mark, by rewriting the key file: a new
// file holding only what remains is written and synced, then renamed over
// keys.db, so no page of the key file keeps the destroyed key (a deleted
// bbolt value can survive in a free page; a rewritten file has none).
// On failure the old file stays as it was (the pending mark too) and the
// erasure is finished at the next Open. Errors: ErrKeyFile.
func (r *Ring) Destroy(d Digest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writable(); err != nil {
		return err
	}
	keys, erased := copyKeys(r.keys), copyErased(r.erased)
	if l, ok := keys[d]; ok {
		erased[d] = l.gen
		delete(keys, d)
	} else if _, ok := erased[d]; !ok {
		erased[d] = 0 // erased without a key: recorded all the same (WasErased)
	}
	pending := map[Digest]string{}
	for p, by := range r.pending {
		if p != d {
			pending[p] = by
		}
	}
	if err := r.rewrite(keys, erased, pending); err != nil {
		return fmt.Errorf("%w: rewrite %s: %w", ErrKeyFile, filepath.Base(r.path), err)
	}
	r.keys, r.erased, r.pending = keys, erased, pending
	r.forget(d)
	return nil
}

func copyKeys(m map[Digest]live) map[Digest]live {
	out := make(map[Digest]live, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func copyErased(m map[Digest]uint32) map[Digest]uint32 {
	out := make(map[Digest]uint32, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// rewrite writes the ring's content as a new file and renames it over
// the key file (r.mu held). r.db is reopened on the result.
func (r *Ring) rewrite(keys map[Digest]live, erased map[Digest]uint32, pending map[Digest]string) error {
	tmp := r.path + ".rewrite"
	_ = os.Remove(tmp)
	err := r.writeFile(tmp, keys, erased, pending)
	if err == nil {
		err = failpoint.Err(failpoint.KeyringBeforeRename)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := r.db.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	r.db = nil
	renameErr := os.Rename(tmp, r.path)
	if renameErr == nil {
		renameErr = syncDir(filepath.Dir(r.path))
	}
	db, err := bolt.Open(r.path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return errors.Join(renameErr, err)
	}
	r.db = db
	return renameErr
}

func (r *Ring) writeFile(path string, keys map[Digest]live, erased map[Digest]uint32, pending map[Digest]string) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		m, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if err := errors.Join(m.Put([]byte("id"), r.id[:]), m.Put([]byte("secret"), r.secret[:]), m.Put([]byte("format"), []byte("1"))); err != nil {
			return err
		}
		if err := fill(tx, keys, erased, pending); err != nil {
			return err
		}
		return putPersonal(tx, r.personal)
	})
	return errors.Join(err, db.Close())
}

func fill(tx *bolt.Tx, keys map[Digest]live, erased map[Digest]uint32, pending map[Digest]string) error {
	kb, err1 := tx.CreateBucket(bucketKeys)
	eb, err2 := tx.CreateBucket(bucketErased)
	pb, err3 := tx.CreateBucket(bucketPending)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	for d, l := range keys {
		if err := kb.Put(d[:], l.bytes()); err != nil {
			return err
		}
	}
	for d, g := range erased {
		if err := eb.Put(d[:], binary.BigEndian.AppendUint32(nil, g)); err != nil {
			return err
		}
	}
	for d, by := range pending {
		if err := pb.Put(d[:], []byte(by)); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// WasErased reports whether d was ever erased (Destroy, ApplyErasure).
func (r *Ring) WasErased(d Digest) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.erased[d]
	return ok
}
