package progress

import (
	"bytes"
	"testing"
	"time"
)

// A plain line shows the share of the work really done, not the tenth it
// crossed: replay jumps in batches, and 4096 of 21613 read "10%".
func TestPlainLineShowsTheRealPercentage(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(0, 0)}
	b := newBar(&out, 21613, "replaying", false, clock.now)
	clock.t = clock.t.Add(time.Second)
	b.Set(4096)
	if want := "replaying: 18% (4096/21613) elapsed 1s, about 4s left\n"; out.String() != want {
		t.Fatalf("line %q, want %q", out.String(), want)
	}
}
