package keyring

import (
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// Key material travels to a replicated store's standbys as grants
// (docs/replication.md, "Personal data keys"): the key file's identity
// (FileGrant), each subject's live key (KeyGrant) and each erasure
// (ErasureGrant). Applying them is monotonic per subject: an erasure of
// generation g destroys every key of generation ≤ g and refuses such a
// key arriving later, so grants and erasures may be applied in any order,
// any number of times, and an erased key never comes back.

const (
	fileGrantLen = 8 + 32
	keyGrantLen  = 4 + 32
)

// FileGrant is the key file's identity: its id and its HMAC secret (the
// same on every host of a replicated store, so a subject has one digest
// and a sealed value opens on any of them).
func (r *Ring) FileGrant() []byte {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append(append([]byte{}, r.id[:]...), r.secret[:]...)
}

// AdoptFile gives the key file the identity g (a FileGrant) when it is
// not already its own. Only a key file that holds nothing yet (no key, no
// erasure, no pending mark) can take another identity; one that holds
// keys of another identity is ErrKeyFile: it belongs to another store.
func (r *Ring) AdoptFile(g []byte) error {
	if len(g) != fileGrantLen {
		return fmt.Errorf("%w: a key file grant of %d bytes", ErrKeyFile, len(g))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if subtle.ConstantTimeCompare(g[:8], r.id[:]) == 1 && subtle.ConstantTimeCompare(g[8:], r.secret[:]) == 1 {
		return nil
	}
	if len(r.keys)+len(r.erased)+len(r.pending) > 0 {
		return fmt.Errorf("%w: %s holds keys of another key file than the replicated store's", ErrKeyFile, filepath.Base(r.path))
	}
	if err := r.writable(); err != nil {
		return err
	}
	oldID, oldSecret := r.id, r.secret
	copy(r.id[:], g[:8])
	copy(r.secret[:], g[8:])
	if err := r.rewrite(r.keys, r.erased, r.pending); err != nil {
		r.id, r.secret = oldID, oldSecret
		return fmt.Errorf("%w: rewrite %s: %w", ErrKeyFile, filepath.Base(r.path), err)
	}
	return nil
}

// KeyGrant is d's live key as a grant (its generation and key); false
// when d has none.
func (r *Ring) KeyGrant(d Digest) ([]byte, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	l, ok := r.keys[d]
	if !ok {
		return nil, false
	}
	return l.bytes(), true
}

// GrantGeneration is the key generation a KeyGrant carries.
func GrantGeneration(g []byte) (uint32, bool) {
	if len(g) != keyGrantLen {
		return 0, false
	}
	return binary.BigEndian.Uint32(g), true
}

// Live lists the subjects with a live key, in digest order.
func (r *Ring) Live() []Digest {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Digest, 0, len(r.keys))
	for d := range r.keys {
		out = append(out, d)
	}
	sortDigests(out)
	return out
}

// ErasedGenerations is, for every erased subject, the last generation
// destroyed.
func (r *Ring) ErasedGenerations() map[Digest]uint32 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return copyErased(r.erased)
}

// ApplyGrant stores the key grant g of d (fsynced) unless d already has
// that key, or an erasure destroyed its generation (then the grant is
// refused: an erased key is never resurrected) or a newer one is live. A
// grant of the live generation with another key replaces it: the key
// stream replaced a deposed primary's key (grants are applied in the
// stream's order). It reports whether the key was stored. Errors:
// ErrKeyFile, ErrSealedValueMalformed (not a key grant).
func (r *Ring) ApplyGrant(d Digest, g []byte) (bool, error) {
	gen, ok := GrantGeneration(g)
	if !ok || gen == 0 {
		return false, fmt.Errorf("%w: a key grant of %d bytes", ErrSealedValueMalformed, len(g))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, has := r.keys[d]
	if (has && (cur.gen > gen || subtle.ConstantTimeCompare(cur.key[:], g[4:]) == 1)) || gen <= r.erased[d] {
		return false, nil
	}
	if err := r.writable(); err != nil {
		return false, err
	}
	l := live{gen: gen}
	copy(l.key[:], g[4:])
	if err := r.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketKeys).Put(d[:], l.bytes()) }); err != nil {
		return false, fmt.Errorf("%w: store a granted key: %w", ErrKeyFile, err)
	}
	r.keys[d] = l
	r.forget(d)
	return true, nil
}

// ApplyErasure records that d's keys up to generation gen were erased:
// a live key of generation ≤ gen is destroyed (the file rewritten, as
// Destroy does) and such a key granted later is refused. An erasure
// already known changes nothing. Errors: ErrKeyFile.
func (r *Ring) ApplyErasure(d Digest, gen uint32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, live := r.keys[d]
	destroys := live && l.gen <= gen
	if prev, known := r.erased[d]; !destroys && known && prev >= gen {
		return nil
	}
	if err := r.writable(); err != nil {
		return err
	}
	keys, erased := copyKeys(r.keys), copyErased(r.erased)
	if destroys {
		delete(keys, d)
	}
	erased[d] = max(erased[d], gen)
	if err := r.rewrite(keys, erased, r.pending); err != nil {
		return fmt.Errorf("%w: rewrite %s: %w", ErrKeyFile, filepath.Base(r.path), err)
	}
	r.keys, r.erased = keys, erased
	r.forget(d)
	return nil
}

// ErasureGrant is the erasure of generation gen as a grant.
func ErasureGrant(gen uint32) []byte { return binary.BigEndian.AppendUint32(nil, gen) }

// ParseErasureGrant reads an ErasureGrant.
func ParseErasureGrant(g []byte) (uint32, error) {
	if len(g) != 4 {
		return 0, fmt.Errorf("%w: an erasure grant of %d bytes", ErrSealedValueMalformed, len(g))
	}
	return binary.BigEndian.Uint32(g), nil
}

func sortDigests(ds []Digest) {
	sort.Slice(ds, func(i, j int) bool { return string(ds[i][:]) < string(ds[j][:]) })
}
