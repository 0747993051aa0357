package events

import (
	"reflect"
	"sync"
	"testing"
)

// The manifest is parsed once per change: reads share the parse until a
// seal changes it, and then see the new segment; a caller's copy is its
// own.
func TestI38_TheSegmentManifestIsParsedOncePerSealAndReadsSeeEachSeal(t *testing.T) {
	w := sealWriter(t, 200)
	l := w.Log()
	_, err := l.Seal(w.Fence(), 100)
	must(t, err)
	segs, err := l.Segments()
	must(t, err)
	parsed := l.manifest.Load()
	all := readAll(t, l, 1)
	checkStreams(t, l, all)
	if len(segs) != 1 || l.manifest.Load() != parsed {
		t.Fatalf("%d segments; reads parsed the manifest again: %v", len(segs), l.manifest.Load() != parsed)
	}
	segs[0].Name = "changed by the caller"
	if again, err := l.Segments(); err != nil || again[0].Name == segs[0].Name {
		t.Fatalf("Segments shares its slice with the caller: %v", err)
	}
	_, err = l.Seal(w.Fence(), 200)
	must(t, err)
	if segs, err = l.Segments(); err != nil || len(segs) != 2 {
		t.Fatalf("after the second seal: %d segments, %v", len(segs), err)
	}
	if got := readAll(t, l, 1); !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatal("ReadFrom after the second seal differs")
	}
}

// Reads running while seals commit each see one manifest (run with -race).
func TestI38_ReadsDuringSealsShareTheManifestWithoutRaces(t *testing.T) {
	w := sealWriter(t, 200)
	l := w.Log()
	all := readAll(t, l, 1)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				var n int
				if err := l.ReadFrom(1, func(Event) error { n++; return nil }); err != nil || n < len(all) {
					errs <- err
					return
				}
			}
		})
	}
	for _, below := range []uint64{60, 120, 180, 230} {
		_, err := l.Seal(w.Fence(), below)
		must(t, err)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a read during the seals: %v", err)
	}
}
