package effects_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
)

// writeGate holds the first batchUpdate answered after it is armed until
// a second batchUpdate arrives (or hold passes), and records whether one
// did: a second write sent while the first was out.
type writeGate struct {
	mu     sync.Mutex
	armed  bool
	held   bool // the first write was held
	out    bool // and is held now
	beside bool
	second chan struct{}
	onHold func() // run once the first write is held
	hold   time.Duration
	writes int
}

func (g *writeGate) serve(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ":batchUpdate") {
			h.ServeHTTP(w, r)
			return
		}
		g.mu.Lock()
		g.writes++
		first := g.armed && !g.held
		if first {
			g.held, g.out = true, true
		} else if g.out && !g.beside {
			g.beside = true
			close(g.second)
		}
		g.mu.Unlock()
		h.ServeHTTP(w, r) // applied before the held answer is released
		if first {
			g.onHold()
			select {
			case <-g.second:
			case <-time.After(g.hold):
			}
			g.mu.Lock()
			g.out = false
			g.mu.Unlock()
		}
	})
}

func (g *writeGate) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.second = true, make(chan struct{})
}

func (g *writeGate) sentBeside() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.beside
}

// A pass whose write of new rows is out sends the new rows committed
// meanwhile beside it (AheadAfter passed, the budget holds two requests):
// a second batchUpdate arrives while the first is out, every row lands
// once, in order (I07: no row is in both batches), and both batches
// settle applied.
func TestI07_NewRowsCommittedWhileAWriteOfNewRowsIsOutGoBesideIt(t *testing.T) {
	gate := &writeGate{hold: 5 * time.Second}
	r := newRigServing(t, gate.serve, func(c *effects.Config) {
		c.MaxBatch = 64 // no batch is full: nothing is prefetched while a write is out
		c.AheadAfter = time.Millisecond
	})
	for i := range 5 {
		r.commit(strconv.Itoa(i), airport("first", int64(i)))
	}
	gate.onHold = func() {
		for i := 100; i < 105; i++ {
			r.commit(strconv.Itoa(i), airport("beside", int64(i)))
		}
	}
	gate.arm()
	r.runUntilApplied(t, 2*10) // 10 rows, System and Input
	if !gate.sentBeside() {
		t.Fatalf("no batchUpdate arrived while the first write of new rows was out (%d writes)", gate.writes)
	}
	for _, id := range []string{"0", "4", "100", "104"} {
		for _, tab := range []string{"Airport_System", "Airport_Input"} {
			if r.rowOf(tab, id) == nil { // rowOf fails on an anchor shown twice
				t.Fatalf("row %s missing on %s", id, tab)
			}
		}
	}
	if n := len(r.rows("Airport_System")); n != 11 {
		t.Fatalf("Airport_System shows %d rows with its header, want 11", n)
	}
	if c := r.counts(); c[aggregates.EffectApplied] != 20 || len(c) != 1 {
		t.Fatalf("outbox %v, want 20 applied and nothing else", c)
	}
}
