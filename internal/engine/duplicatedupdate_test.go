package engine_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// A person pastes a copy of m-2's System row, then the application
// updates m-2: the update fails (anchor_duplicated, terminal).
// Reconciliation supersedes it without a replacement (any write of the row
// fails the same way while the copy is there), anti-entropy removes the
// copy, and the row left is rewritten from canonical state. Before, each
// reconciliation queued the same update again, which failed the same way,
// and the row in flight kept anti-entropy off it: the copy stayed and the
// update was never shown.
func TestI16_AnUpdateOfARowAPersonPastedTwiceIsWrittenOnceTheCopyIsGone(t *testing.T) {
	x, _ := openMembers(t)
	ref := x.cellRef(memberSystem, "m-2", "team")
	row, err := strconv.Atoi(strings.TrimLeft(ref, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
	mustT(t, err)
	_, err = x.sheet.Person().PasteRow(memberSystem, row)
	mustT(t, err)
	commit(t, x.Store, &Member{ID: "m-2", Email: "m-2.person@example.invalid", Team: "green"})
	for range 5 {
		x.pass()
		x.clock.Advance(time.Minute)
		_, err := x.h.Reconcile(ctx)
		mustT(t, err)
	}
	x.pass()
	if got := x.rows(memberSystem); len(got) != 4 || x.cellOf(memberSystem, "m-2", "team") != "green" {
		t.Fatalf("rows after 5 reconciliations: %v; outbox %v", got, x.outbox())
	}
}
