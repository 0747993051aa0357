package engine_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// An Input tab cleared completely (header included; deleted and created
// again empty is the same) and polled, then a commit that appends one of
// its rows before anti-entropy's pass: the append does not land blind on
// row 1, where the header belongs (it did: the header seen before the
// clear was still trusted, and no pass could then restore the tab); it
// reads first and waits, the pass writes the header and every row, the
// new one included, and health is ok again.
func TestAnInputTabClearedThenWrittenIsRestoredByAntiEntropy(t *testing.T) {
	x := openSyncedOn(t, t.TempDir(), serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), nil), nil, parts)
	seedParts(t, x, 4)
	x.poll()
	mustT(t, x.sheet.Person().ClearTab(partInput, 1))
	x.poll()
	u := x.Begin()
	mustT(t, u.Persist(&Part{ID: "9", Name: "part 9", SKU: "00009", Qty: 9}))
	_, err := u.Commit(ctx)
	mustT(t, err)
	x.pass()
	if rows := x.rows(partInput); len(rows) != 0 {
		t.Fatalf("%s after the write: %q, want it still empty (the write waits for the pass)", partInput, rows)
	}
	for range 2 {
		x.reconcile(2)
		x.poll()
	}
	x.drain()
	if n := len(x.rows(partInput)); n != 6 {
		t.Fatalf("%s: %q, want the header and 5 rows", partInput, x.rows(partInput))
	}
	if h := x.syncHealth(); h.State != hikoutei.SyncOK {
		t.Fatalf("sync health: %s %q", h.State, h.Reason)
	}
}
