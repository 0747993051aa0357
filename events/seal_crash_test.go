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

// sealCrashing seals below with the failpoint spec armed; it returns the
// seal's error, or the failpoint's crash as one.
func sealCrashing(t *testing.T, w *Writer, spec string, below uint64) (err error) {
	t.Helper()
	must(t, failpoint.Enable(spec))
	defer failpoint.Disable()
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(*failpoint.Crash)
			if !ok {
				panic(r)
			}
			err = c
		}
	}()
	_, err = w.Log().Seal(w.Fence(), below)
	return err
}

func TestI38_ACrashAtEachStepOfASealLeavesEveryRecordInExactlyOnePlace(t *testing.T) {
	for _, spec := range []string{failpoint.SealAfterWrite + "=panic", failpoint.SealAfterSync + "=panic", failpoint.SealAfterReadBack + "=panic",
		failpoint.SealBeforeCommit + "=eio"} {
		t.Run(spec, func(t *testing.T) {
			w := sealWriter(t, 200)
			dir := filepath.Dir(w.Log().Path())
			all := readAll(t, w.Log(), 1)
			entries, _, _ := indexState(t, w.Log())
			err := sealCrashing(t, w, spec, 230)
			var crash *failpoint.Crash
			if !errors.As(err, &crash) && !errors.Is(err, syscall.EIO) {
				t.Fatalf("the seal did not stop at %s: %v", spec, err)
			}
			must(t, w.Close()) // the process ends; a new one opens the store
			w, err = OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, AcquireWait: -1, HeartbeatInterval: -1})
			must(t, err)
			defer w.Close()
			l := w.Log()
			segs, err := l.Segments()
			must(t, err)
			inLog, err := l.logRange(1, 229)
			must(t, err)
			if len(segs) != 0 || len(inLog) != 229 {
				t.Fatalf("after the crash: %d segments vouched for, %d of 1..229 in log.db", len(segs), len(inLog))
			}
			stray, err := l.StraySegments()
			must(t, err)
			// A kill inside the write leaves its temporary file, which the
			// next writer removes; a later one leaves a stray segment.
			want := 1
			if spec == failpoint.SealAfterWrite+"=panic" {
				want = 0
			}
			if len(stray) != want {
				t.Fatalf("the unvouched file is not reported (or a temporary one not removed): %v", stray)
			}
			if got := readAll(t, l, 1); !reflect.DeepEqual(got[:len(all)], all) {
				t.Fatal("the events after the crash differ")
			}
			if n, stale, _ := indexState(t, l); n < entries || stale != 0 { // and the lease's events
				t.Fatalf("the stream index after the crash: %d entries (%d stale), %d before", n, stale, entries)
			}
			fullVerify(t, l, nil)
			rep, err := l.Seal(w.Fence(), 230)
			must(t, err)
			if stray, _ := l.StraySegments(); len(stray) != 0 || rep.Replaced != (spec != failpoint.SealAfterWrite+"=panic") {
				t.Fatalf("the next seal left %v (replaced: %v)", stray, rep.Replaced)
			}
			got := readAll(t, l, 1)
			if _, sealed := got[len(got)-1].Payload.(SegmentSealed); !reflect.DeepEqual(got[:len(all)], all) || !sealed {
				t.Fatal("the events after the next seal differ")
			}
			if after := fullVerify(t, l, nil); after.Segments != 1 {
				t.Fatalf("after the next seal: %+v", after)
			}
			if _, stale, _ := indexState(t, l); stale != 0 {
				t.Fatalf("the next seal left %d stale index entries", stale)
			}
			checkStreams(t, l, got)
		})
	}
}
