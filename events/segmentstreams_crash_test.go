//go:build failpoints

package events

import (
	"errors"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// segStreamsKeys counts the segment streams index's keys (0: no bucket).
func segStreamsKeys(t *testing.T, l *Log) (n int) {
	t.Helper()
	must(t, l.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketSegStreams); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	}))
	return n
}

// The index is written in the seal's transaction: a seal that fails
// before it commits leaves no entry; the next one indexes its segment.
func TestI38_ASealThatDoesNotCommitLeavesNoSegmentStreamsEntry(t *testing.T) {
	w := manyStreamsLog(t, 5, 40, 20, true)
	l := w.Log()
	before := segStreamsKeys(t, l)
	_, err := w.Append(unit("entity/Part/crash", AnyVersion, 6))
	must(t, err)
	head, err := l.Head()
	must(t, err)
	if err := sealCrashing(t, w, failpoint.SealBeforeCommit+"=eio", head+1); !errors.Is(err, syscall.EIO) {
		t.Fatalf("the seal did not stop before its commit: %v", err)
	}
	if n := segStreamsKeys(t, l); n != before {
		t.Fatalf("after a seal that did not commit: %d index keys, %d before", n, before)
	}
	_, err = l.Seal(w.Fence(), head+1)
	must(t, err)
	got, st, err := readCounted(t, l, "entity/Part/crash", 1)
	must(t, err)
	if n := segStreamsKeys(t, l); n <= before || len(got) != 6 || st.Loaded != 1 || st.IndexFallbacks != 0 {
		t.Fatalf("after the next seal: %d index keys (%d before), %d events, %+v", n, before, len(got), st)
	}
}
