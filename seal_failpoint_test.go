//go:build failpoints

package hikoutei

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// TestI38_ASealThatCommittedThenMetAFullDiskSaysSo: when read.sqlite
// cannot record a seal the log committed (ENOSPC at its commit), Seal
// returns read_model_behind with the report, and its reason says the
// seal is committed, which segment it wrote, and what to do; the next
// commit catches the read model up, and the records read through the
// segment.
func TestI38_ASealThatCommittedThenMetAFullDiskSaysSo(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	loadAirports(t, s, 30)
	before := eventsFrom(t, s, 1)
	mustT(t, failpoint.Enable(failpoint.ReadModelBeforeCommit+"=enospc"))
	rep, err := s.Seal(ctx, SealOptions{Keep: 5, MinBatch: 1})
	failpoint.Disable()
	if !errors.Is(err, ErrReadModelBehind) || !errors.Is(err, syscall.ENOSPC) || ErrorCode(err) != "read_model_behind" {
		t.Fatalf("seal meeting a full disk: code %s: %v", ErrorCode(err), err)
	}
	if rep.Segment == "" || rep.Seq == 0 {
		t.Fatalf("no report of the committed seal: %+v", rep)
	}
	for _, want := range []string{"the seal is committed", rep.Segment, "nothing is lost", "free disk space", "no space left"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("the reason lacks %q: %v", want, err)
		}
	}
	if segs, err := s.Segments(); err != nil || len(segs) != 1 || segs[0].Name != rep.Segment {
		t.Fatalf("segments after the seal: %v %v", segs, err)
	}
	a := readAirports(t)[0]
	a.Name += " (after)"
	commit(t, s, &a)
	if after := eventsFrom(t, s, 1); len(after) != len(before)+2 {
		t.Fatalf("%d events after the seal and a commit, want %d", len(after), len(before)+2)
	}
}
