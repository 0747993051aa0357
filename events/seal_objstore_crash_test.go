//go:build failpoints

package events

import (
	"errors"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// TestI38_ACrashAtEachStepOfASealToAnObjectStoreLosesNothing stops a seal
// into an object store after the upload, after the read-back and before
// the commit; a new process opening the store (with the same bucket)
// finds every event exactly once, the uploaded object stray, and the
// next seal replaces it.
func TestI38_ACrashAtEachStepOfASealToAnObjectStoreLosesNothing(t *testing.T) {
	for _, spec := range []string{failpoint.SealAfterSync + "=panic", failpoint.SealAfterReadBack + "=panic",
		failpoint.SealBeforeCommit + "=eio"} {
		t.Run(spec, func(t *testing.T) {
			segs := memSegments()
			w := sealWriterOn(t, 200, segs)
			dir := filepath.Dir(w.Log().Path())
			all := readAll(t, w.Log(), 1)
			err := sealCrashing(t, w, spec, 230)
			var crash *failpoint.Crash
			if !errors.As(err, &crash) && !errors.Is(err, syscall.EIO) {
				t.Fatalf("the seal did not stop at %s: %v", spec, err)
			}
			must(t, w.Close())
			w, err = OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0), Segments: segs}, AcquireWait: -1, HeartbeatInterval: -1})
			must(t, err)
			defer w.Close()
			l := w.Log()
			if vouched, err := l.Segments(); err != nil || len(vouched) != 0 {
				t.Fatalf("after the crash: %v vouched for (%v)", vouched, err)
			}
			if inLog, err := l.logRange(1, 229); err != nil || len(inLog) != 229 {
				t.Fatalf("after the crash: %d of 1..229 in log.db (%v)", len(inLog), err)
			}
			if stray, err := l.StraySegments(); err != nil || len(stray) != 1 {
				t.Fatalf("the uploaded object no seal vouches for: %v (%v)", stray, err)
			}
			if got := checkExactlyOnce(t, l); !reflect.DeepEqual(got[:len(all)], all) {
				t.Fatal("the events after the crash differ")
			}
			fullVerify(t, l, nil)
			rep, err := l.Seal(w.Fence(), 230)
			must(t, err)
			if stray, _ := l.StraySegments(); len(stray) != 0 || !rep.Replaced {
				t.Fatalf("the next seal left %v (replaced: %v)", stray, rep.Replaced)
			}
			if got := checkExactlyOnce(t, l); !reflect.DeepEqual(got[:len(all)], all) {
				t.Fatal("the events after the next seal differ")
			}
			if after := fullVerify(t, l, nil); after.Segments != 1 {
				t.Fatalf("after the next seal: %+v", after)
			}
		})
	}
}
