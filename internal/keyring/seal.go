package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

// Prefix starts every sealed value as the log, the read model and the
// sheet hold it.
const Prefix = "hk1e:"

// header is what a sealed value carries before its nonce: the key file's
// id, the subject's digest and the key's generation.
const headerLen = 8 + 16 + 4

const nonceLen = 12

// State is what opening a value found.
type State int

const (
	// Plain: the value is not sealed (a field not personal when it was
	// written); it is returned as it is.
	Plain State = iota
	// Opened: a sealed value, opened with its subject's key.
	Opened
	// Erased: a sealed value whose key an erasure destroyed.
	Erased
)

// IsSealed reports whether s is a sealed value.
func IsSealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// Seal seals plaintext, field of entity, for the subject d, whose key
// Ensure made. Errors: ErrKeysLost when d has no live key.
func (r *Ring) Seal(entity, field string, d Digest, plaintext string) (string, error) {
	r.mu.RLock()
	l, ok := r.keys[d]
	id := r.id
	r.mu.RUnlock()
	if !ok {
		return "", fmt.Errorf("%w: no key for subject %s", ErrKeysLost, d)
	}
	hdr := header(id, d, l.gen)
	ad := associated(entity, field, hdr)
	aead, nonceKey := r.cipherFor(d, l)
	m := hmac.New(sha256.New, nonceKey)
	m.Write(ad)
	m.Write([]byte(plaintext))
	nonce := m.Sum(nil)[:nonceLen]
	out := append(append(hdr, nonce...), aead.Seal(nil, nonce, []byte(plaintext), ad)...)
	return Prefix + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open opens s, field of entity. A value that is not sealed is Plain.
// Errors: ErrKeysLost (s was sealed under another key file, or under a key
// this one never held and no erasure destroyed), ErrSealedValueMalformed.
func (r *Ring) Open(entity, field, s string) (string, State, error) {
	if !IsSealed(s) {
		return s, Plain, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s[len(Prefix):])
	if err != nil || len(raw) < headerLen+nonceLen+16 {
		return "", Plain, fmt.Errorf("%w: %s.%s", ErrSealedValueMalformed, entity, field)
	}
	if r == nil {
		return "", Plain, fmt.Errorf("%w: %s.%s is sealed and the store has no key file (%s)", ErrKeysLost, entity, field, File)
	}
	var id [8]byte
	var d Digest
	copy(id[:], raw)
	copy(d[:], raw[8:])
	gen := binary.BigEndian.Uint32(raw[24:])
	r.mu.RLock()
	l, live := r.keys[d]
	erasedGen, wasErased := r.erased[d]
	mine := id == r.id
	r.mu.RUnlock()
	switch {
	case !mine:
		return "", Plain, fmt.Errorf("%w: %s.%s was sealed under another key file than this store's %s", ErrKeysLost, entity, field, File)
	case live && l.gen == gen:
		return r.open(entity, field, d, l, raw)
	case wasErased && gen <= erasedGen:
		return "", Erased, nil
	}
	return "", Plain, fmt.Errorf("%w: %s.%s: the key of subject %s generation %d is missing from %s", ErrKeysLost, entity, field, d, gen, File)
}

func (r *Ring) open(entity, field string, d Digest, l live, raw []byte) (string, State, error) {
	hdr := raw[:headerLen]
	nonce := raw[headerLen : headerLen+nonceLen]
	aead, _ := r.cipherFor(d, l)
	pt, err := aead.Open(nil, nonce, raw[headerLen+nonceLen:], associated(entity, field, hdr))
	if err != nil {
		return "", Plain, fmt.Errorf("%w: %s.%s: authentication failed", ErrSealedValueMalformed, entity, field)
	}
	return string(pt), Opened, nil
}

// SubjectOf is the subject digest a sealed value names.
func SubjectOf(s string) (Digest, bool) {
	d, _, ok := HeaderOf(s)
	return d, ok
}

// HeaderOf is the subject digest and the key generation a sealed value
// names (readable without the key: tools that tell an erased value from
// a live one by the log's subject.erased events).
func HeaderOf(s string) (Digest, uint32, bool) {
	var d Digest
	if !IsSealed(s) {
		return d, 0, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s[len(Prefix):])
	if err != nil || len(raw) < headerLen {
		return d, 0, false
	}
	copy(d[:], raw[8:])
	return d, binary.BigEndian.Uint32(raw[24:]), true
}

// ID is the key file's id (random, made with the file).
func (r *Ring) ID() [8]byte { return r.id }

func header(id [8]byte, d Digest, gen uint32) []byte {
	out := make([]byte, 0, headerLen+nonceLen+64)
	out = append(out, id[:]...)
	out = append(out, d[:]...)
	return binary.BigEndian.AppendUint32(out, gen)
}

func associated(entity, field string, hdr []byte) []byte {
	ad := []byte("hikoutei.personal.v1\x00" + entity + "\x00" + field + "\x00")
	return append(ad, hdr...)
}

// cipherOf derives the AEAD and the nonce key from a subject's data key.
func cipherOf(key [32]byte) (cipher.AEAD, []byte) {
	enc := derive(key, "enc")
	block, _ := aes.NewCipher(enc) // 32 bytes: never an error
	aead, _ := cipher.NewGCM(block)
	return aead, derive(key, "nonce")
}

func derive(key [32]byte, label string) []byte {
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte(label))
	return m.Sum(nil)
}
