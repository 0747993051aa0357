package effects_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
)

// orderedOutbox records, in the order the store took them, the batches
// claimed and settled, and commits a unit of new rows after each of the
// first claims (as an application commits while a write is out).
type orderedOutbox struct {
	*effects.MemOutbox
	mu      sync.Mutex
	log     []string
	units   int // units still to commit after a claim
	unitLen int
	next    int
}

func (o *orderedOutbox) Claim(spreadsheet string, n int) ([]aggregates.Effect, error) {
	fx, err := o.MemOutbox.Claim(spreadsheet, n)
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(fx) > 0 {
		o.log = append(o.log, "claim "+fx[0].ID)
	}
	if len(fx) == 0 || o.units == 0 || err != nil {
		return fx, err
	}
	o.units--
	for range o.unitLen {
		if _, err := o.MemOutbox.Commit("Airport", strconv.Itoa(o.next), airport("a", int64(o.next))); err != nil {
			return fx, err
		}
		o.next++
	}
	return fx, nil
}

func (o *orderedOutbox) Settle(s []effects.Settlement) error {
	o.mu.Lock()
	if len(s) > 0 {
		o.log = append(o.log, "settle "+s[0].ID)
	}
	o.mu.Unlock()
	return o.MemOutbox.Settle(s)
}

func (o *orderedOutbox) calls() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.log...)
}

// The run loop claims the next batch as a write returns, before that
// batch's settlement enters the store (claimAhead): every settlement of a
// batch that had a successor follows the successor's claim.
func TestTheRunLoopClaimsTheNextBatchBeforeThePreviousSettlement(t *testing.T) {
	var ob *orderedOutbox
	r := newRig(t, func(c *effects.Config) {
		c.MaxBatch = 64 // no batch is full: nothing is prefetched while a write is out
		ob = &orderedOutbox{MemOutbox: c.Outbox.(*effects.MemOutbox), units: 3, unitLen: 5, next: 100}
		c.Outbox = ob
	})
	for i := range 5 {
		r.commit(strconv.Itoa(i), airport("first", int64(i)))
	}
	r.runUntilApplied(t, 2*20) // 4 units of 5 rows, System and Input
	calls := ob.calls()
	claims, settled := 0, 0
	for _, c := range calls {
		if strings.HasPrefix(c, "claim") {
			claims++
		} else {
			settled++
		}
	}
	if claims != 4 || settled != 4 {
		t.Fatalf("%d claims and %d settlements, want 4 each: %v", claims, settled, calls)
	}
	var claimed []string // batches in claim order
	at := map[string]int{}
	for i, c := range calls {
		at[c] = i
		if id, ok := strings.CutPrefix(c, "claim "); ok {
			claimed = append(claimed, id)
		}
	}
	for k := range 3 { // settle k after claim k+1 (a settlement commits in the background)
		if s, ok := at["settle "+claimed[k]]; !ok || s < at["claim "+claimed[k+1]] {
			t.Fatalf("calls %v: want each settlement after the next batch's claim", calls)
		}
	}
}
