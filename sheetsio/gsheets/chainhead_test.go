package gsheets

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func chainHead(seq uint64, digit string) *sheetsio.ChainHead {
	return &sheetsio.ChainHead{Seq: seq, Hash: strings.Repeat(digit, 64)}
}

// readHead reads the authority row as a fresh client would and checks
// the fence cells still hold fence.
func readHead(t *testing.T, h *harness, w *sheetsio.Workbook, fence *sheetsio.Fence) sheetsio.ChainHead {
	t.Helper()
	a, err := h.p.ReadAuthority(context.Background(), w)
	if err != nil || !a.Present || a.StoreID != fence.StoreID || a.Epoch != fence.Epoch || a.Token != fence.Token {
		t.Fatalf("authority %+v: %v", a, err)
	}
	return a.Head
}

// The chain head rides in a dispatch's own batchUpdate (no request of its
// own), never moves back when a dispatch carries an older head, and is
// not written by a dispatch that writes nothing else; the fence cells and
// checks are untouched.
func TestI33_TheDispatchPublishesTheChainHeadInTheAuthorityRowAndNeverMovesItBack(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(5, "a"), Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if res.Reads != 1 || res.Writes != 1 {
		t.Fatalf("dispatch cost %d reads + %d writes, want 1 + 1", res.Reads, res.Writes)
	}
	if got := readHead(t, h, w, fence); got != *chainHead(5, "a") {
		t.Fatalf("head on the sheet %v, want 5", got)
	}
	// A head sampled earlier (lower) does not overwrite the later one.
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(3, "b"), Ops: []sheetsio.Op{appendOp("Part_System", "r2", partValues("2", 1))}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if got := readHead(t, h, w, fence); got.Seq != 5 {
		t.Fatalf("an older head moved the sheet's back to %v", got)
	}
	// A dispatch with nothing to write sends no request for the head.
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(9, "c"), Ops: []sheetsio.Op{appendOp("Part_System", "r2", partValues("2", 1))}})
	if h.wantStatus(res, 0, sheetsio.StatusUnchanged); res.Writes != 0 || readHead(t, h, w, fence).Seq != 5 {
		t.Fatalf("a dispatch with nothing to write: %d writes, head %v", res.Writes, readHead(t, h, w, fence))
	}
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(9, "c"), Ops: []sheetsio.Op{appendOp("Part_System", "r3", partValues("3", 1))}})
	if h.wantStatus(res, 0, sheetsio.StatusApplied); res.Writes != 1 || readHead(t, h, w, fence) != *chainHead(9, "c") {
		t.Fatalf("the later head: %d writes, head %v", res.Writes, readHead(t, h, w, fence))
	}
	// The fence still refuses another writer, head or not.
	other := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t2"}
	if _, err := h.p.Dispatch(context.Background(), w, sheetsio.Batch{Fence: other, Head: chainHead(20, "d"),
		Ops: []sheetsio.Op{appendOp("Part_System", "r4", partValues("4", 1))}}); sheetsio.CodeOf(err) != sheetsio.CodeAuthorityStale {
		t.Fatalf("another token's dispatch: %v", err)
	}
	if got := readHead(t, h, w, fence); got.Seq != 9 {
		t.Fatalf("a fenced-out dispatch wrote the head %v", got)
	}
}

// A blind append (no read) publishes a later head in its one batchUpdate
// and, knowing what it wrote, not an older one.
func TestI33_ABlindAppendPublishesTheChainHeadWithoutARead(t *testing.T) {
	h, w, fence, _ := blindHarness(t)
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(7, "e"), Ops: []sheetsio.Op{firstSend("Part_System", "b1", partValues("b1", 1))}})
	if h.wantStatus(res, 0, sheetsio.StatusApplied); res.Reads != 0 || res.Writes != 1 {
		t.Fatalf("blind append cost %d reads + %d writes", res.Reads, res.Writes)
	}
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(6, "f"), Ops: []sheetsio.Op{firstSend("Part_System", "b2", partValues("b2", 1))}})
	if h.wantStatus(res, 0, sheetsio.StatusApplied); res.Reads != 0 {
		t.Fatalf("the second blind append read %d times", res.Reads)
	}
	if got := readHead(t, h, w, fence); got != *chainHead(7, "e") {
		t.Fatalf("head on the sheet %v, want 7", got)
	}
}

// A cell a person edited into something else is no head (the fence
// still reads the row) and the next dispatch overwrites it.
func TestI33_AnEditedChainHeadCellIsReplacedAndNeverBlocksTheFence(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(5, "a"), Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	if err := h.emu.Person(testSheetID).Type(layout.AuthorityTab, "E2", "not a head"); err != nil {
		t.Fatal(err)
	}
	if got := readHead(t, h, w, fence); got != (sheetsio.ChainHead{}) {
		t.Fatalf("an edited cell read as head %v", got)
	}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(6, "b"), Ops: []sheetsio.Op{appendOp("Part_System", "r2", partValues("2", 1))}})
	if got := readHead(t, h, w, fence); got != *chainHead(6, "b") {
		t.Fatalf("head on the sheet %v, want 6", got)
	}
}

func TestParseChainHeadReadsOnlySeqColonHash(t *testing.T) {
	good := "12:" + strings.Repeat("0f", 32)
	if h, ok := sheetsio.ParseChainHead(good); !ok || h.Seq != 12 || h.String() != good {
		t.Fatalf("%q: %v %v", good, h, ok)
	}
	for _, bad := range []string{"", "12", "x:" + strings.Repeat("0", 64), "12:" + strings.Repeat("0", 63), "12:" + strings.Repeat("G", 64), "12:" + strings.Repeat("A", 64)} {
		if _, ok := sheetsio.ParseChainHead(bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
}

// An authority tab an earlier build provisioned (four columns) gains the
// chain_head header when provisioned again, keeps its fence, and then
// carries the head.
func TestI33_AnOlderAuthorityTabIsExtendedWithTheChainHeadColumn(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t)
	w := h.provision(s)
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	if err := h.emu.Person(testSheetID).Type(layout.AuthorityTab, "E1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := h.p.ReadAuthority(context.Background(), w); sheetsio.CodeOf(err) != sheetsio.CodeHeaderDrift {
		t.Fatalf("a four-column authority tab before provisioning: %v", err)
	}
	w = h.provision(s)
	if got := h.values(layout.AuthorityTab)[0]; len(got) != 5 || got[4] != layout.AuthorityChainHead {
		t.Fatalf("authority header %v", got)
	}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(4, "a"), Ops: []sheetsio.Op{appendOp("Part_System", "r2", partValues("2", 1))}})
	if got := readHead(t, h, w, fence); got != *chainHead(4, "a") {
		t.Fatalf("head on the extended tab %v", got)
	}
}

// F3: a chain_head cell a person typed is rewritten by the next dispatch
// whatever it says — a SEQ:HASH far past the log's head, the right seq
// with another hash, an older head — and the dispatch reports what the
// cell showed (HeadShown), so a cell ahead of the log is seen; never
// frozen. A cell that shows exactly the head is left alone.
func TestF3_APersonsChainHeadCellIsRewrittenByTheNextDispatchWhateverItSays(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(5, "a"), Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	row := 2
	for _, typed := range []string{"999999999:" + strings.Repeat("0", 64), "6:" + strings.Repeat("e", 64), "1:" + strings.Repeat("1", 64)} {
		if err := h.emu.Person(testSheetID).Type(layout.AuthorityTab, "E2", typed); err != nil {
			t.Fatal(err)
		}
		want, _ := sheetsio.ParseChainHead(typed)
		res := h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(6, "b"),
			Ops: []sheetsio.Op{appendOp("Part_System", fmt.Sprintf("r%d", row), partValues(fmt.Sprint(row), 1))}})
		row++
		h.wantStatus(res, 0, sheetsio.StatusApplied)
		if res.HeadShown == nil || *res.HeadShown != want {
			t.Fatalf("typed %q: the dispatch reports %v", typed, res.HeadShown)
		}
		if got := readHead(t, h, w, fence); got != *chainHead(6, "b") {
			t.Fatalf("typed %q: head on the sheet %v after the dispatch, want 6:b…", typed, got)
		}
	}
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Head: chainHead(6, "b"), Ops: []sheetsio.Op{appendOp("Part_System", "rz", partValues("z", 1))}})
	if res.HeadShown == nil || *res.HeadShown != *chainHead(6, "b") || res.Writes != 1 {
		t.Fatalf("the cell showing the head: shown %v, %d writes", res.HeadShown, res.Writes)
	}
}
