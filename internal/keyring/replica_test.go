package keyring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// twoRings is a primary's key file with one sealed value of alice, and a
// standby's empty key file that adopted its identity.
func twoRings(t *testing.T) (primary, standby *Ring, d Digest, sealed string) {
	t.Helper()
	dir := t.TempDir()
	p, err := Open(filepath.Join(dir, "p-"+File), true)
	mustOK(t, err)
	s, err := Open(filepath.Join(dir, "s-"+File), true)
	mustOK(t, err)
	t.Cleanup(func() { p.Close(); s.Close() })
	d = p.Digest("alice")
	_, err = p.Ensure([]Digest{d})
	mustOK(t, err)
	sealed, err = p.Seal("Person", "email", d, "alice@example.org")
	mustOK(t, err)
	mustOK(t, s.AdoptFile(p.FileGrant()))
	return p, s, d, sealed
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestI37_AGrantedKeyOpensOnTheStandbyAndAnErasureDestroysIt(t *testing.T) {
	p, s, d, sealed := twoRings(t)
	if s.Digest("alice") != d {
		t.Fatal("the adopted key file names alice by another digest")
	}
	g, _ := p.KeyGrant(d)
	if ok, err := s.ApplyGrant(d, g); err != nil || !ok {
		t.Fatalf("grant: %v %v", ok, err)
	}
	if got, st, err := s.Open("Person", "email", sealed); err != nil || st != Opened || got != "alice@example.org" {
		t.Fatalf("the standby opens %q %v %v", got, st, err)
	}
	mustOK(t, s.ApplyErasure(d, 1))
	if _, st, err := s.Open("Person", "email", sealed); err != nil || st != Erased {
		t.Fatalf("after the erasure: %v %v", st, err)
	}
	raw, err := os.ReadFile(s.path)
	mustOK(t, err)
	if bytes.Contains(raw, g[4:]) {
		t.Fatal("the standby's key file still holds the erased key")
	}
	// The grant again (a replay of the key stream): refused.
	if ok, err := s.ApplyGrant(d, g); err != nil || ok {
		t.Fatalf("a grant after the erasure was applied: %v %v", ok, err)
	}
	if _, st, _ := s.Open("Person", "email", sealed); st != Erased {
		t.Fatal("the erased key came back")
	}
}

func TestI37_AGrantArrivingAfterItsErasureIsRefused(t *testing.T) {
	p, s, d, sealed := twoRings(t)
	g, _ := p.KeyGrant(d)
	mustOK(t, s.ApplyErasure(d, 1)) // the erasure first, then the late grant
	if ok, err := s.ApplyGrant(d, g); err != nil || ok {
		t.Fatalf("a late grant was applied: %v %v", ok, err)
	}
	if _, st, err := s.Open("Person", "email", sealed); err != nil || st != Erased {
		t.Fatalf("a late grant resurrected the value: %v %v", st, err)
	}
	// A later generation (the subject got values again) is granted.
	mustOK(t, p.Destroy(d))
	_, err := p.Ensure([]Digest{d})
	mustOK(t, err)
	g2, _ := p.KeyGrant(d)
	if ok, err := s.ApplyGrant(d, g2); err != nil || !ok {
		t.Fatalf("the next generation's grant: %v %v", ok, err)
	}
}

func TestAKeyFileHoldingKeysRefusesAnotherIdentity(t *testing.T) {
	p, _, _, _ := twoRings(t)
	other, err := Open(filepath.Join(t.TempDir(), File), true)
	mustOK(t, err)
	defer other.Close()
	if err := p.AdoptFile(other.FileGrant()); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("adopting another identity over keys = %v, want personal_key_file", err)
	}
	mustOK(t, p.AdoptFile(p.FileGrant())) // its own: nothing to do
}

// The key stream replaced a deposed primary's key of the same
// generation: the standby takes the replacement (applied in stream order).
func TestAGrantOfTheLiveGenerationWithAnotherKeyReplacesIt(t *testing.T) {
	p, s, d, sealed := twoRings(t)
	g, _ := p.KeyGrant(d)
	deposed := append([]byte{}, g...)
	deposed[10] ^= 0xff
	if ok, err := s.ApplyGrant(d, deposed); err != nil || !ok {
		t.Fatalf("the deposed primary's grant: %v %v", ok, err)
	}
	if ok, err := s.ApplyGrant(d, g); err != nil || !ok {
		t.Fatalf("the replacing grant: %v %v", ok, err)
	}
	if got, st, err := s.Open("Person", "email", sealed); err != nil || st != Opened || got != "alice@example.org" {
		t.Fatalf("after the replacement the standby opens %q %v %v", got, st, err)
	}
}
