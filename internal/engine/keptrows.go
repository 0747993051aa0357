package engine

import (
	"math"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// keptRows are the clean rows a kept read holds between passes, packed:
// every anchor and expected hash in one byte buffer, with where each
// ends. A row costs the bytes of its two texts and 8 bytes of offsets,
// not two string headers and two allocations (docs/sync.md gives the
// measured size: BenchmarkKeptReadRetainedHeap).
type keptRows struct {
	text []byte   // anchor, hash, anchor, hash, …
	ends []uint32 // ends[2i]: where row i's anchor ends in text; ends[2i+1]: its hash
}

// packRows packs the anchors of rows with their hashes in hash, in
// order; ok is false when they do not fit (4 GiB of text).
func packRows(anchors []string, clean []bool, hash map[string]string, n int) (k keptRows, ok bool) {
	size := 0
	for i, a := range anchors {
		if clean[i] {
			size += len(a) + len(hash[a])
		}
	}
	if size > math.MaxUint32 {
		return keptRows{}, false
	}
	k.text, k.ends = make([]byte, 0, size), make([]uint32, 0, 2*n)
	for i, a := range anchors {
		if clean[i] {
			k.text = append(k.text, a...)
			k.ends = append(k.ends, uint32(len(k.text)))
			k.text = append(k.text, hash[a]...)
			k.ends = append(k.ends, uint32(len(k.text)))
		}
	}
	return k, true
}

// len is the number of rows.
func (k *keptRows) len() int { return len(k.ends) / 2 }

// anchor is row i's anchor, in the buffer (valid while k is).
func (k *keptRows) anchor(i int) []byte {
	return k.text[k.start(2*i):k.ends[2*i]]
}

// start is where text j (2i: row i's anchor, 2i+1: its hash) begins.
func (k *keptRows) start(j int) uint32 {
	if j == 0 {
		return 0
	}
	return k.ends[j-1]
}

// row is row i as a SeenRow (its texts copied).
func (k *keptRows) row(i int) aggregates.SeenRow {
	return aggregates.SeenRow{Anchor: string(k.anchor(i)), Hash: string(k.text[k.ends[2*i]:k.ends[2*i+1]])}
}
