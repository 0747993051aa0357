package engine

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// activityLines returns the messages and attributes logged, one per line
// (the time left out).
func activityLines(buf *bytes.Buffer) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	buf.Reset()
	return out
}

// serve's INFO lines of what the workers do: people's edits by count, at
// most one line per activityEvery (passes in between are summed into the
// next), none for passes that took nothing in; the backfill's progress
// per tab, rate-limited, and its end at once. The clock is injected.
func TestActivityLinesAreRateLimitedSummedAndCountsOnly(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	a := newActivity(log, func() time.Time { return now })

	a.observed(aggregates.ObserveStats{Rows: 100}) // nothing taken in: no line
	a.observed(aggregates.ObserveStats{Rows: 100, Accepted: 2, Quarantined: 1})
	now = now.Add(5 * time.Second)
	a.observed(aggregates.ObserveStats{Rows: 100, Accepted: 3})
	a.observed(aggregates.ObserveStats{Rows: 100, Candidates: 1})
	now = now.Add(10 * time.Second)
	a.observed(aggregates.ObserveStats{Rows: 100})
	want := []string{
		`level=INFO msg="people's edits taken in" accepted=2 conflicts=0 quarantined=1 passes=1`,
		`level=INFO msg="people's edits taken in" accepted=3 conflicts=1 quarantined=0 passes=3`,
	}
	if got := activityLines(&buf); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("inbound lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	a.queued(map[string]int64{"Airport_System": 1000})
	for i := 0; i < 10; i++ {
		now = now.Add(4 * time.Second)
		a.written(map[string]int64{"Airport_System": 100, "Other_Tab": 5}) // no backfill of Other_Tab: nothing said
	}
	a.written(map[string]int64{"Airport_System": 100}) // past the end: nothing more
	want = []string{
		`level=INFO msg="backfill: rows written to the spreadsheet" tab=Airport_System written=0 total=1000`,
		`level=INFO msg="backfill: rows written to the spreadsheet" tab=Airport_System written=400 total=1000`,
		`level=INFO msg="backfill: rows written to the spreadsheet" tab=Airport_System written=800 total=1000`,
		`level=INFO msg="backfill: rows written to the spreadsheet" tab=Airport_System written=1000 total=1000 done=true`,
	}
	if got := activityLines(&buf); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("backfill lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
