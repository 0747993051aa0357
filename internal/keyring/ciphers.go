package keyring

import "crypto/cipher"

// maxCiphers bounds the ciphers a Ring keeps derived (one per subject
// whose values were sealed or opened lately); past it an arbitrary one
// is dropped.
const maxCiphers = 4096

// derived is a subject's AEAD and nonce key, derived from key (the
// subject's live key when it was derived).
type derived struct {
	key   [32]byte
	aead  cipher.AEAD
	nonce []byte
}

// cipherFor is the AEAD and nonce key of d's live key l, derived once and
// kept (Find of many records opens many values of few subjects). A kept
// cipher is used only for the very key it was derived from, and it is
// kept only while that key is d's live key: Destroy and ApplyErasure drop
// it under the same lock, so an erased key's cipher is never kept.
func (r *Ring) cipherFor(d Digest, l live) (cipher.AEAD, []byte) {
	r.cmu.Lock()
	c, ok := r.ciphers[d]
	r.cmu.Unlock()
	if ok && c.key == l.key {
		return c.aead, c.nonce
	}
	aead, nonce := cipherOf(l.key)
	r.mu.RLock()
	defer r.mu.RUnlock()
	if cur, ok := r.keys[d]; ok && cur == l {
		r.keep(d, derived{key: l.key, aead: aead, nonce: nonce})
	}
	return aead, nonce
}

// keep stores c as d's cipher (the caller holds r.mu).
func (r *Ring) keep(d Digest, c derived) {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	if r.ciphers == nil {
		r.ciphers = map[Digest]derived{}
	}
	if _, ok := r.ciphers[d]; !ok && len(r.ciphers) >= maxCiphers {
		for k := range r.ciphers {
			delete(r.ciphers, k)
			break
		}
	}
	r.ciphers[d] = c
}

// forget drops d's kept cipher (the caller holds r.mu for writing).
func (r *Ring) forget(d Digest) {
	r.cmu.Lock()
	delete(r.ciphers, d)
	r.cmu.Unlock()
}

// cachedCiphers is how many ciphers r keeps (tests).
func (r *Ring) cachedCiphers() int {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	return len(r.ciphers)
}
