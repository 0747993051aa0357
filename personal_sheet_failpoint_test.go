//go:build failpoints

package hikoutei_test

import (
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// TestI37_AnInterruptedErasureReachesTheSheet: an erasure stopped after
// its event committed is finished by the next Open, which does not know
// the subject in clear and queues no rewrite; the first reconciliation
// finds the subject's cell still showing the value and writes the marker.
func TestI37_AnInterruptedErasureReachesTheSheet(t *testing.T) {
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	r := openMembers(t, dir, sheet)
	r.persist(t, &member{ID: "m-1", Email: memberEmail, Team: "blue"})
	r.h.Drain(t.Context())
	if err := failpoint.Enable(failpoint.EraseAfterEvent + "=eio"); err != nil {
		t.Fatal(err)
	}
	_, err := r.s.Erase(t.Context(), "m-1")
	failpoint.Disable()
	if err == nil {
		t.Fatal("the erasure did not stop")
	}
	if err := r.s.Close(); err != nil {
		t.Fatal(err)
	}
	r = openMembers(t, dir, sheet)
	if got, err := hikoutei.Get[member](t.Context(), r.s, "m-1"); err != nil || got.Email != hikoutei.Erased {
		t.Fatalf("after the reopen: %+v %v", got, err)
	}
	if _, err := r.h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.h.Drain(t.Context())
	if found, _ := r.cells(t, "after a reconciliation", hikoutei.Erased, memberEmail); found != 1 {
		t.Fatalf("the erased cell shows the marker %d times, want 1", found)
	}
}
