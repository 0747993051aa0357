package gsheets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// engineReceipt gives op a receipt of the engine's shapes (an effect id
// "fx" + 16 hex digits, a payload hash "xxh64:" + 16), so it is packed.
func engineReceipt(op sheetsio.Op, n int) sheetsio.Op {
	op.Receipt = &sheetsio.Receipt{EffectID: fmt.Sprintf("fx%016x", n), PayloadHash: fmt.Sprintf("xxh64:%016x", 1000+n)}
	return op
}

// TestI06_PackedReceiptsCertifyEachWrite: the receipts of an append, an
// update and a delete of the engine's shapes are read back with the op,
// the written row hash and the payload hash of each; the append and the
// update are packed (33 characters each, no tab or binding), the delete
// (no row hash) is an entry line with every field.
func TestI06_PackedReceiptsCertifyEachWrite(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	first := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{engineReceipt(appendOp("Part_System", "u", partValues("u", 1)), 1),
		engineReceipt(appendOp("Part_System", "d", partValues("d", 2)), 2)}})
	ops := []sheetsio.Op{
		engineReceipt(appendOp("Part_System", "a", partValues("a", 3)), 3),
		engineReceipt(sheetsio.Op{ID: "u2", Tab: "Part_System", Kind: sheetsio.OpUpdate, Anchor: "u", ExpectedHash: first.Ops[0].WrittenHash,
			Values: map[string]any{"qty": int64(9)}}, 4),
		engineReceipt(sheetsio.Op{ID: "d2", Tab: "Part_System", Kind: sheetsio.OpDelete, Anchor: "d", ExpectedHash: first.Ops[1].WrittenHash}, 5),
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: ops})
	var ids []string
	for i, op := range ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
		ids = append(ids, op.Receipt.EffectID)
	}
	recs, err := h.p.ReadReceipts(context.Background(), w, ids...)
	if err != nil || len(recs) != 3 {
		t.Fatalf("%d receipts, %v", len(recs), err)
	}
	for i, op := range ops {
		r := recs[op.Receipt.EffectID]
		want := sheetsio.ReceiptEntry{EffectID: op.Receipt.EffectID, Op: op.Kind.String(), RowHash: res.Ops[i].WrittenHash, PayloadHash: op.Receipt.PayloadHash}
		if op.Kind == sheetsio.OpDelete {
			want.Tab, want.Binding, want.RowHash = op.Tab, res.Ops[i].Binding, ""
		}
		if r.ReceiptEntry != want || r.Epoch != 0 || r.ReceiptID == "" {
			t.Fatalf("receipt %+v, want %+v", r, want)
		}
	}
	entries := h.values(layout.ReceiptsTab)[2][receiptsLayout().ColumnIndex(layout.ReceiptEntries)].(string)
	packed, line, _ := strings.Cut(entries, "\n")
	if len(packed) != 1+2*sheetsio.PackedEntrySize || strings.Count(line, "\t") != 5 {
		t.Fatalf("entries cell %q", entries)
	}
}

// TestI16_PackedReceiptsCutShortOrCopiedAreNoEvidence: a packed line cut
// short (a truncated paste) is receipt_malformed for the effects it
// lists; a copy of the receipt row makes them receipt_ambiguous.
func TestI16_PackedReceiptsCutShortOrCopiedAreNoEvidence(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	ops := []sheetsio.Op{engineReceipt(appendOp("Part_System", "r1", partValues("1", 1)), 1),
		engineReceipt(appendOp("Part_System", "r2", partValues("2", 2)), 2)}
	h.dispatch(w, sheetsio.Batch{Ops: ops})
	ids := []string{ops[0].Receipt.EffectID, ops[1].Receipt.EffectID}
	col := receiptsLayout().ColumnIndex(layout.ReceiptEntries)
	entries := h.values(layout.ReceiptsTab)[1][col].(string)
	ref := fmt.Sprintf("%c2", 'A'+col)
	if err := h.emu.Person(testSheetID).Type(layout.ReceiptsTab, ref, entries[:len(entries)-4]); err != nil {
		t.Fatal(err)
	}
	recs, err := h.p.ReadReceipts(context.Background(), w, ids...)
	if !errors.Is(err, sheetsio.ErrReceiptMalformed) || len(recs) != 0 {
		t.Fatalf("cut short: recs %v, err %v", recs, err)
	}
	if err := h.emu.Person(testSheetID).Type(layout.ReceiptsTab, ref, entries); err != nil {
		t.Fatal(err)
	}
	if _, err := h.emu.Person(testSheetID).PasteRow(layout.ReceiptsTab, 2); err != nil {
		t.Fatal(err)
	}
	recs, err = h.p.ReadReceipts(context.Background(), w, ids...)
	if !errors.Is(err, sheetsio.ErrReceiptAmbiguous) || len(recs) != 0 {
		t.Fatalf("copied: recs %v, err %v", recs, err)
	}
}
