package effects

import (
	"context"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// The reads of Run's passes: a woken poll's urgent; a timer poll's, the
// full scan's and the cleanup's neither urgent nor background (the woken
// polls wait for them).
func TestPassCtx(t *testing.T) {
	cases := []struct {
		pass               int
		woken              bool
		urgent, background bool
	}{
		{0, true, true, false},
		{0, false, false, false},
		{1, false, false, false},
		{1, true, false, false},
		{2, false, false, false},
	}
	for _, c := range cases {
		ctx := passCtx(context.Background(), c.pass, c.woken)
		p := sheetsio.ReadPriority(ctx)
		if urgent, background := p == sheetsio.PriorityUrgent, p == sheetsio.PriorityBackground; urgent != c.urgent || background != c.background {
			t.Errorf("pass %d woken %v: read priority %v, want urgent %v background %v", c.pass, c.woken, p, c.urgent, c.background)
		}
	}
}
