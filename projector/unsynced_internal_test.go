package projector

import (
	"fmt"
	"slices"
	"testing"
)

// TestWrittenLogListsEveryWriteOrForgetsWhatItDrops: the list of written
// entities holds every write past from, in log order, each entity once;
// the writes of a batch that rolled back are dropped when the log's seqs
// go on below them; past maxWritten it forgets the older half, a search
// since before what it forgot is refused and one since is answered.
func TestWrittenLogListsEveryWriteOrForgetsWhatItDrops(t *testing.T) {
	var w writtenLog
	w.note(1, "A", "x")
	w.note(2, "A", "y")
	w.note(3, "B", "x")
	w.note(4, "A", "x")
	ids, ok := w.after(1)
	if !ok || !slices.Equal(ids["A"], []string{"y", "x"}) || !slices.Equal(ids["B"], []string{"x"}) {
		t.Fatalf("after 1: %v, %v", ids, ok)
	}
	w.note(5, "A", "ghost") // a batch that rolled back: seq 5 is written again
	w.note(5, "A", "z")
	if ids, _ := w.after(4); !slices.Equal(ids["A"], []string{"ghost", "z"}) {
		t.Fatalf("after 4: %v, want the rolled-back write kept beside the real one (a search reads more, never less)", ids)
	}
	w.note(6, "A", "ghost2")
	w.note(6, "A", "w") // seq 6 again
	w.note(6, "A", "v")
	w.note(3, "A", "after-rollback") // seqs went back below 4..6: those were never applied
	if ids, ok := w.after(2); !ok || !slices.Equal(ids["A"], []string{"after-rollback"}) || !slices.Equal(ids["B"], []string{"x"}) {
		t.Fatalf("after 2 once seq 3 is written again: %v, %v", ids, ok)
	}
	w = writtenLog{from: 10}
	if _, ok := w.after(9); ok {
		t.Fatal("a search since before the list began was accepted")
	}
	for i := range maxWritten + 1 {
		w.note(uint64(11+i), "A", fmt.Sprint(i))
	}
	forgot := uint64(10 + maxWritten/2) // seqs 11..forgot were dropped
	if _, ok := w.after(forgot - 1); ok {
		t.Fatal("a search since before what the list forgot was accepted")
	}
	last := uint64(10 + maxWritten)
	if ids, ok := w.after(last); !ok || !slices.Equal(ids["A"], []string{fmt.Sprint(maxWritten)}) {
		t.Fatalf("after %d: %v, %v", last, ids, ok)
	}
	ids, ok = w.after(forgot)
	if !ok || len(ids["A"]) != maxWritten/2+1 || ids["A"][0] != fmt.Sprint(maxWritten/2) {
		t.Fatalf("after %d, the newer half kept: %d ids, %v", forgot, len(ids["A"]), ok)
	}
}

// Forgetting the older half in the middle of one seq's writes (an event
// writing two entity states): the seq becomes the list's start, a search
// since before it is refused, and one since it lists every later write.
func TestWrittenLogForgetsOlderHalfAcrossOneSeq(t *testing.T) {
	var w writtenLog
	seqOf := func(i int) uint64 { return uint64(i+1) / 2 } // 0; 1, 1; 2, 2; …
	for i := range maxWritten + 1 {
		w.note(seqOf(i), "A", fmt.Sprint(i))
	}
	split := seqOf(maxWritten/2 - 1)
	if seqOf(maxWritten/2) != split {
		t.Fatalf("the split is not inside one seq: %d, %d", split, seqOf(maxWritten/2))
	}
	if _, ok := w.after(split - 1); ok {
		t.Fatal("a search since before the forgotten writes was accepted")
	}
	ids, ok := w.after(split)
	if !ok || len(ids["A"]) != maxWritten/2 || ids["A"][0] != fmt.Sprint(maxWritten/2+1) {
		t.Fatalf("after %d: %d ids, %v", split, len(ids["A"]), ok)
	}
}
