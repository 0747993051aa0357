package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// The capacity projection says when growth is unknown (one read) or
// zero, projects the date from the reads' own times otherwise, and warns
// from 80 % only.
func TestSpreadsheetCapacityProjectsFromTheReadsTimes(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	sample := func(cells int64, d time.Duration) sheetsio.GridSample {
		return sheetsio.GridSample{Cells: cells, At: t0.Add(d)}
	}
	cases := []struct {
		name    string
		samples []sheetsio.GridSample
		warns   bool
		detail  string
		fullAt  time.Time
	}{
		{"under 80 %", []sheetsio.GridSample{sample(7_000_000, 0), sample(7_900_000, 24*time.Hour)}, false, "", t0.Add(80 * time.Hour)},
		{"one read", []sheetsio.GridSample{sample(8_000_000, 0)}, true, "growth unknown", time.Time{}},
		{"not growing", []sheetsio.GridSample{sample(9_000_000, 0), sample(9_000_000, time.Hour)}, true, "not growing", time.Time{}},
		{"growing", []sheetsio.GridSample{sample(8_000_000, 0), sample(9_000_000, 24*time.Hour)}, true, "full around 2026-12-04", t0.Add(48 * time.Hour)},
		{"full", []sheetsio.GridSample{sample(9_000_000, 0), sample(10_000_000, time.Hour)}, true, "full", time.Time{}},
	}
	for _, c := range cases {
		got := capacityOf(c.samples)
		w, warns := capacityWarning(got)
		if warns != c.warns || !strings.Contains(w.Detail, c.detail) || !got.FullAt.Equal(c.fullAt) {
			t.Errorf("%s: warning %v %q, full at %v; want %v %q, %v", c.name, warns, w.Detail, got.FullAt, c.warns, c.detail, c.fullAt)
		}
	}
	if capacityOf(nil) != nil {
		t.Error("capacity without any read is known")
	}
}
