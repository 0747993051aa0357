package gsheets

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// A 429 slows the whole budget of its class, every worker's, once per
// exhausted quota (AIMD); successes bring it back towards the configured
// rate. Reads and writes are budgets of their own.
func TestQuotaBudgetSlowsOnRateLimitAndRecovers(t *testing.T) {
	now := fixedNow
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) {
		c.Pacing = Pacing{ReadInterval: time.Millisecond, WriteInterval: time.Millisecond, Burst: 100}
		c.Now = func() time.Time { return now }
	})
	w := h.provision(testSchema(t))
	before := h.p.QuotaBudget()
	if before.ReadRate != 1000 || before.ReadCeiling != 1000 || before.WriteRate != 1000 || before.ReadThrottled != 0 {
		t.Fatalf("fresh budget %+v, want 1000 a second each", before)
	}
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchReads},
		emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchReads})
	if err := h.p.Check(context.Background(), testSheetID); err != nil {
		t.Fatal(err)
	}
	q := h.p.QuotaBudget()
	// Two 429s within the hold window: one decrease; then the retry's
	// success adds a twentieth back.
	if q.ReadThrottled != 2 || q.ReadRate != 550 || q.WriteRate != 1000 || q.WriteThrottled != 0 {
		t.Fatalf("after two read 429s and a success: %+v, want reads at 550/s, writes untouched", q)
	}
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchWrites})
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	if res.Ops[0].Status == sheetsio.StatusApplied {
		t.Fatal("a write answered 429 was applied")
	}
	if q = h.p.QuotaBudget(); q.WriteThrottled != 1 || q.WriteRate != 500 {
		t.Fatalf("after a write 429: %+v, want writes at 500/s", q)
	}
	now = now.Add(time.Minute)
	for i := range 10 {
		k := strconv.Itoa(i + 2)
		h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r"+k, partValues(k, 1))}})
	}
	if q = h.p.QuotaBudget(); q.WriteRate != 1000 || q.ReadRate != 1000 {
		t.Fatalf("after successes: %+v, want back at the ceiling", q)
	}
}
