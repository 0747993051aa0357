package engine_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// An Input tab cleared completely (header included; deleted and created
// again empty is the same), then a commit that writes one of its rows
// before anti-entropy's pass: the write lands on row 1, where the header
// belongs, and no pass then writes the header or restores the other rows;
// health stays blocked with suspected_mass_deletion. Reproduction of a
// review finding (s23-review), skipped until it is fixed.
func TestAnInputTabClearedThenWrittenIsRestoredByAntiEntropy(t *testing.T) {
	t.Skip("review finding: a cleared Input tab written before the pass is never restored")
	x := openSyncedOn(t, t.TempDir(), serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), nil), nil, parts)
	seedParts(t, x, 4)
	x.poll()
	mustT(t, x.sheet.Person().ClearTab(partInput, 1))
	x.poll()
	u := x.Begin()
	mustT(t, u.Persist(&Part{ID: "9", Name: "part 9", SKU: "00009", Qty: 9}))
	_, err := u.Commit(ctx)
	mustT(t, err)
	x.drain()
	for range 3 {
		x.reconcile(2)
		x.poll()
	}
	if n := len(x.rows(partInput)); n != 6 {
		t.Fatalf("%s: %q, want the header and 5 rows", partInput, x.rows(partInput))
	}
	if h := x.syncHealth(); h.State != hikoutei.SyncOK {
		t.Fatalf("sync health: %s %q", h.State, h.Reason)
	}
}
