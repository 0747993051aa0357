package effects

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// Only the first claim of a row's first effect may skip the preflight
// read: a retry, or a later append of the same row (a backfill or repair
// queued while an earlier write's outcome was unknown), reads first, so a
// row that an earlier (killed) run appended is recognised, not appended
// twice.
func TestOnlyTheFirstClaimOfARowsFirstEffectIsAFirstSend(t *testing.T) {
	for _, c := range []struct {
		attempts int64
		seq      uint64
		want     bool
	}{{1, 1, true}, {2, 1, false}, {1, 2, false}, {3, 5, false}} {
		fx := aggregates.Effect{ID: "fx", Op: events.OpAppend, Attempts: c.attempts, StreamSeq: c.seq}
		if got := toOp(fx).FirstSend; got != c.want {
			t.Errorf("attempts %d, stream seq %d: first send %v, want %v", c.attempts, c.seq, got, c.want)
		}
	}
}
