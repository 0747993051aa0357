package replication

import (
	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// A key message is replaced only by a primary of a newer lease epoch: a
// deposed primary never replaces the key the store's values are sealed
// with, and the new primary replaces the one a deposed primary stored.
func TestKeyGrantsAreFencedByTheLeaseEpoch(t *testing.T) {
	c := replicationtest.StartCluster(t, 1)
	ks, err := OpenKeyStream(ctxFor(t, deadline), c.Connect(), Config{Store: "keys", Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t, deadline)
	const d = "00112233445566778899aabbccddeeff"
	k1, k2, k3 := []byte("key-one"), []byte("key-two"), []byte("key-three")
	if err := ks.Grant(ctx, d, k1, 1); err != nil {
		t.Fatal(err)
	}
	if err := ks.Grant(ctx, d, k1, 1); err != nil {
		t.Fatalf("the same grant again: %v", err)
	}
	if err := ks.Grant(ctx, d, k2, 1); !errors.Is(err, ErrFenced) {
		t.Fatalf("another key at the same epoch = %v, want fenced", err)
	}
	if err := ks.Grant(ctx, d, k2, 2); err != nil {
		t.Fatalf("a newer epoch's key: %v", err)
	}
	if err := ks.Grant(ctx, d, k3, 1); !errors.Is(err, ErrFenced) {
		t.Fatalf("a deposed epoch's key = %v, want fenced", err)
	}
	got, ok, err := ks.Key(ctx, d)
	if err != nil || !ok || string(got) != string(k2) {
		t.Fatalf("the stream's key: %q %v %v", got, ok, err)
	}
	if err := ks.Erase(ctx, d, []byte{0, 0, 0, 1}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ks.Key(ctx, d); ok || err != nil {
		t.Fatalf("after the erasure the key message is there: %v %v", ok, err)
	}
	var kinds []string
	if err := ks.ReadAll(ctx, func(m KeyMsg) error { kinds = append(kinds, m.Kind+":"+m.Digest); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 1 || kinds[0] != KeyKindErased+":"+d {
		t.Fatalf("the stream holds %v, want only the erasure", kinds)
	}
}
