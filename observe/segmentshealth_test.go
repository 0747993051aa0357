package observe

import (
	"fmt"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// An unreachable segment store shows in the health report with its code
// and does not fail health: commits go on.
func TestAnUnreachableSegmentStoreIsReportedWithItsCodeAndHealthStaysOK(t *testing.T) {
	h := hikoutei.Health{Segments: fmt.Errorf("read segment x: %w", hikoutei.ErrSegmentStoreUnavailable)}
	r := Report(h)
	if r.Status != "ok" || r.SegmentsCode != "segment_store_unavailable" || r.Segments == "" {
		t.Fatalf("report %+v", r)
	}
	if r := Report(hikoutei.Health{}); r.Segments != "" || r.SegmentsCode != "" {
		t.Fatalf("a healthy store reports segments %q %q", r.Segments, r.SegmentsCode)
	}
}
