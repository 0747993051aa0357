package keyring

import (
	"path/filepath"
	"sync"
	"testing"
)

// A subject's cipher is derived once and kept; Destroy and ApplyErasure
// drop it, so an erased key's cipher is neither kept nor used, and the
// cache stays bounded.
func TestCipherCacheDroppedOnErasure(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), File), true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	alice, bob := r.Digest("alice"), r.Digest("bob")
	if _, err := r.Ensure([]Digest{alice, bob}); err != nil {
		t.Fatal(err)
	}
	sa, _ := r.Seal("Person", "email", alice, "alice@example.org")
	sb, _ := r.Seal("Person", "email", bob, "bob@example.org")
	for range 3 {
		if got, st, err := r.Open("Person", "email", sa); err != nil || st != Opened || got != "alice@example.org" {
			t.Fatalf("open with a warm cache: %q %v %v", got, st, err)
		}
	}
	if n := r.cachedCiphers(); n != 2 {
		t.Fatalf("ciphers kept: %d, want 2", n)
	}
	mustOK(t, r.Destroy(alice))
	if _, ok := r.ciphers[alice]; ok {
		t.Fatal("Destroy kept the erased key's cipher")
	}
	if _, st, err := r.Open("Person", "email", sa); err != nil || st != Erased {
		t.Fatalf("after Destroy with a warm cache: %v %v", st, err)
	}
	if _, ok := r.ciphers[alice]; ok {
		t.Fatal("opening an erased value kept a cipher")
	}
	mustOK(t, r.ApplyErasure(bob, r.Generation(bob)))
	if _, st, err := r.Open("Person", "email", sb); err != nil || st != Erased || r.cachedCiphers() != 0 {
		t.Fatalf("after ApplyErasure with a warm cache: %v %v, %d kept", st, err, r.cachedCiphers())
	}
}

func TestCipherCacheBounded(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), File), true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ds := make([]Digest, maxCiphers+10)
	for i := range ds {
		ds[i][0], ds[i][1] = byte(i), byte(i>>8)
	}
	if _, err := r.Ensure(ds); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if _, err := r.Seal("Person", "email", d, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.cachedCiphers(); n != maxCiphers {
		t.Fatalf("ciphers kept: %d, want the bound %d", n, maxCiphers)
	}
}

// Opens racing an erasure never keep the erased key's cipher, and every
// open after Destroy returned finds the value erased (run with -race).
func TestCipherCacheOpensRacingDestroy(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), File), true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := r.Digest("alice")
	if _, err := r.Ensure([]Digest{d}); err != nil {
		t.Fatal(err)
	}
	s, _ := r.Seal("Person", "email", d, "alice@example.org")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				if _, st, err := r.Open("Person", "email", s); err != nil || st == Plain {
					t.Errorf("open: %v %v", st, err)
					return
				}
			}
		})
	}
	mustOK(t, r.Destroy(d))
	wg.Wait()
	if _, st, err := r.Open("Person", "email", s); err != nil || st != Erased || r.cachedCiphers() != 0 {
		t.Fatalf("after Destroy: %v %v, %d ciphers kept", st, err, r.cachedCiphers())
	}
}
