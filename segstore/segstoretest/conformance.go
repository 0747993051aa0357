// Package segstoretest is the conformance suite of segstore.Store: every
// implementation (a folder, an object store through gocloud.dev/blob)
// passes the same tests.
package segstoretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// Impl is an implementation under test. Open returns a new, empty
// Store; Reopen, when not nil, returns a second Store over the same
// segments as s (another process opening them), for the durability
// checks.
type Impl struct {
	Open   func(t *testing.T) segstore.Store
	Reopen func(t *testing.T, s segstore.Store) segstore.Store
}

// Run runs the suite against impl.
func Run(t *testing.T, impl Impl) {
	tests := []struct {
		name string
		fn   func(*testing.T, Impl)
	}{
		{"AbsentIsNotFound", absentIsNotFound},
		{"PutThenGetStatList", putThenGetStatList},
		{"PutReplacesWhole", putReplacesWhole},
		{"DeleteRemovesAndIsIdempotent", deleteRemoves},
		{"InvalidNamesAreRefused", invalidNames},
		{"ConcurrentPutsAllLand", concurrentPuts},
		{"ReopenedStoreHoldsWhatWasPut", reopened},
		{"CancelledContextStoresNothing", cancelled},
		{"ListPrefixListsOnlyThePrefix", listPrefix},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, impl) })
	}
}

func open(t *testing.T, impl Impl) segstore.Store {
	t.Helper()
	s := impl.Open(t)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// content is n bytes of a pattern seeded by seed.
func content(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func absentIsNotFound(t *testing.T, impl Impl) {
	s, ctx := open(t, impl), context.Background()
	if _, err := s.Get(ctx, "none.seg.zst"); !errors.Is(err, segstore.ErrNotFound) {
		t.Fatalf("Get of an absent name: %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(ctx, "none.seg.zst"); !errors.Is(err, segstore.ErrNotFound) {
		t.Fatalf("Stat of an absent name: %v, want ErrNotFound", err)
	}
	if l, err := s.List(ctx); err != nil || len(l) != 0 {
		t.Fatalf("List of an empty store: %v, %v", l, err)
	}
}

func putThenGetStatList(t *testing.T, impl Impl) {
	s, ctx := open(t, impl), context.Background()
	big := content(3, 3<<20+17)
	small := []byte{}
	must(t, s.Put(ctx, "b.seg.zst", big))
	must(t, s.Put(ctx, "a.seg.zst", small))
	got, err := s.Get(ctx, "b.seg.zst")
	must(t, err)
	if !bytes.Equal(got, big) {
		t.Fatalf("Get returned %d bytes, Put stored %d (or others)", len(got), len(big))
	}
	if got, err := s.Get(ctx, "a.seg.zst"); err != nil || len(got) != 0 {
		t.Fatalf("the empty object: %d bytes, %v", len(got), err)
	}
	info, err := s.Stat(ctx, "b.seg.zst")
	must(t, err)
	if info.Name != "b.seg.zst" || info.Size != int64(len(big)) {
		t.Fatalf("Stat: %+v", info)
	}
	l, err := s.List(ctx)
	must(t, err)
	want := []segstore.Info{{Name: "a.seg.zst", Size: 0}, {Name: "b.seg.zst", Size: int64(len(big))}}
	if !slices.Equal(l, want) {
		t.Fatalf("List: %+v, want %+v", l, want)
	}
}

// listPrefix: segstore.ListPrefix (the store's own ListPrefix when it
// has one) lists the names starting with the prefix, in order, and
// nothing else.
func listPrefix(t *testing.T, impl Impl) {
	s, ctx := open(t, impl), context.Background()
	for _, n := range []string{"0002-b.seg.zst", "0001-a.seg.zst", "0002-a.seg.zst", "0003-a.seg.zst"} {
		must(t, s.Put(ctx, n, []byte(n)))
	}
	l, err := segstore.ListPrefix(ctx, s, "0002-")
	must(t, err)
	want := []segstore.Info{{Name: "0002-a.seg.zst", Size: 14}, {Name: "0002-b.seg.zst", Size: 14}}
	if !slices.Equal(l, want) {
		t.Fatalf("ListPrefix: %+v, want %+v", l, want)
	}
	if l, err := segstore.ListPrefix(ctx, s, "0009-"); err != nil || len(l) != 0 {
		t.Fatalf("ListPrefix of no name: %+v, %v", l, err)
	}
}

func putReplacesWhole(t *testing.T, impl Impl) {
	s, ctx := open(t, impl), context.Background()
	must(t, s.Put(ctx, "x.seg.zst", content(1, 5000)))
	second := content(9, 100)
	must(t, s.Put(ctx, "x.seg.zst", second))
	got, err := s.Get(ctx, "x.seg.zst")
	must(t, err)
	if !bytes.Equal(got, second) {
		t.Fatalf("after a second Put, Get returned %d bytes, not the second Put's %d", len(got), len(second))
	}
}

func deleteRemoves(t *testing.T, impl Impl) {
	s, ctx := open(t, impl), context.Background()
	must(t, s.Put(ctx, "d.seg.zst", content(2, 10)))
	must(t, s.Delete(ctx, "d.seg.zst"))
	if _, err := s.Get(ctx, "d.seg.zst"); !errors.Is(err, segstore.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := s.Delete(ctx, "d.seg.zst"); err != nil {
		t.Fatalf("Delete of an absent name: %v", err)
	}
	if l, err := s.List(ctx); err != nil || len(l) != 0 {
		t.Fatalf("List after Delete: %v, %v", l, err)
	}
}

func invalidNames(t *testing.T, impl Impl) {
	s, ctx := open(t, impl), context.Background()
	for _, name := range []string{"", ".", "..", "a/b", "../x", "a\\b", "nul\x00"} {
		if err := s.Put(ctx, name, []byte("x")); !errors.Is(err, segstore.ErrInvalidName) {
			t.Errorf("Put(%q): %v, want ErrInvalidName", name, err)
		}
		if _, err := s.Get(ctx, name); !errors.Is(err, segstore.ErrInvalidName) {
			t.Errorf("Get(%q): %v, want ErrInvalidName", name, err)
		}
	}
	if l, err := s.List(ctx); err != nil || len(l) != 0 {
		t.Fatalf("List after refused Puts: %v, %v", l, err)
	}
}

func concurrentPuts(t *testing.T, impl Impl) {
	s, ctx := open(t, impl), context.Background()
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Put(ctx, fmt.Sprintf("c%02d.seg.zst", i), content(byte(i), 1000+i))
		}()
	}
	wg.Wait()
	for i := range n {
		must(t, errs[i])
		got, err := s.Get(ctx, fmt.Sprintf("c%02d.seg.zst", i))
		must(t, err)
		if !bytes.Equal(got, content(byte(i), 1000+i)) {
			t.Fatalf("object %d differs", i)
		}
	}
	if l, err := s.List(ctx); err != nil || len(l) != n {
		t.Fatalf("List: %d objects, %v; want %d", len(l), err, n)
	}
}

func reopened(t *testing.T, impl Impl) {
	if impl.Reopen == nil {
		t.Skip("this implementation keeps its segments in the process only")
	}
	s, ctx := open(t, impl), context.Background()
	data := content(5, 70000)
	must(t, s.Put(ctx, "r.seg.zst", data))
	r := impl.Reopen(t, s)
	defer r.Close()
	got, err := r.Get(ctx, "r.seg.zst")
	must(t, err)
	if !bytes.Equal(got, data) {
		t.Fatal("the reopened store returned other bytes")
	}
	if r.Location() != s.Location() {
		t.Fatalf("locations differ: %v and %v", r.Location(), s.Location())
	}
}

func cancelled(t *testing.T, impl Impl) {
	s := open(t, impl)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Put(ctx, "k.seg.zst", content(4, 10)); err == nil {
		t.Fatal("Put with a cancelled context succeeded")
	}
	if _, err := s.Get(context.Background(), "k.seg.zst"); !errors.Is(err, segstore.ErrNotFound) {
		t.Fatalf("after a cancelled Put, Get: %v, want ErrNotFound", err)
	}
}
