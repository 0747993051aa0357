package sheetsio

import (
	"context"
	"errors"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// ReceiptRecord is one receipt row as read back: the evidence a probe uses
// to settle an uncertain effect (I06, I08). RowHash is the target row's
// visible hash right after the op ("" for a delete); compare it with the
// target row's current hash before settling the effect as applied.
type ReceiptRecord struct {
	EffectID    string
	Op          string
	Tab         string
	Binding     string
	RowHash     string
	PayloadHash string
	Epoch       int64
	Token       string
	WrittenAt   time.Time
}

func receiptsSpec(s *layout.Schema) layout.TabSpec {
	spec, _ := s.Tab(layout.ReceiptsTab)
	return spec
}

// receiptRow encodes the receipt row written alongside op.
func receiptRow(op Op, r *OpResult, f *Fence, now time.Time) (*sheets.RowData, error) {
	var epoch, token any
	if f != nil {
		epoch, token = f.Epoch, f.Token
	}
	spec := receiptsLayout()
	vals := []any{op.Receipt.EffectID, op.Kind.String(), op.Tab, r.Binding, r.WrittenHash,
		op.Receipt.PayloadHash, epoch, token, now, op.Receipt.EffectID}
	if op.Kind == OpDelete {
		vals[4] = nil
	}
	enc, err := cell.EncodeRow(spec.Columns, vals)
	if err != nil {
		return nil, err
	}
	return rowData(spec, enc), nil
}

func receiptsLayout() layout.TabSpec {
	s, _ := layout.NewSchema()
	return receiptsSpec(s)
}

// ReadReceipts returns the receipt rows of the given effect ids that exist
// (one enumeration + one batchGet). A missing id is simply absent from the
// map. Errors: read errors, plus those of ReceiptsFrom. A probe that also
// needs the target rows should call Snapshot(ctx, w, tab, layout.ReceiptsTab)
// and ReceiptsFrom instead: the same two requests cover both.
func (p *Provider) ReadReceipts(ctx context.Context, w *Workbook, effectIDs ...string) (map[string]ReceiptRecord, error) {
	snaps, err := p.Snapshot(ctx, w, layout.ReceiptsTab)
	if err != nil {
		return nil, err
	}
	return ReceiptsFrom(snaps[layout.ReceiptsTab], effectIDs...)
}

// ReceiptsFrom extracts the receipts of effectIDs from a snapshot of the
// receipts tab. Errors: the tab's own Err (CodeTabMissing, CodeHeaderDrift),
// cell.ErrMalformed for receipt rows of the requested ids that do not
// decode, and CodeReceiptAmbiguous when one id has several receipt rows
// (all joined) — never use those as evidence.
func ReceiptsFrom(snap *TabSnapshot, effectIDs ...string) (map[string]ReceiptRecord, error) {
	if snap == nil || snap.Tab != layout.ReceiptsTab {
		return nil, newErr(CodeInvalidBatch, nil, "not a receipts snapshot")
	}
	if snap.Err != nil {
		return nil, snap.Err
	}
	out := map[string]ReceiptRecord{}
	var errs []error
	for _, id := range effectIDs {
		rows := snap.Find(id)
		if len(rows) > 1 {
			errs = append(errs, newErr(CodeReceiptAmbiguous, nil, "%d receipt rows share one effect id", len(rows)))
			continue
		}
		for _, row := range rows {
			rec, err := decodeReceipt(row)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out[id] = rec
		}
	}
	return out, errors.Join(errs...)
}

func decodeReceipt(row Row) (ReceiptRecord, error) {
	vals, err := cell.DecodeRow(receiptsLayout().Columns, row.Cells)
	if err != nil {
		return ReceiptRecord{}, err
	}
	str := func(i int) string { s, _ := vals[i].(string); return s }
	rec := ReceiptRecord{EffectID: str(0), Op: str(1), Tab: str(2), Binding: str(3), RowHash: str(4), PayloadHash: str(5), Token: str(7)}
	rec.Epoch, _ = vals[6].(int64)
	rec.WrittenAt, _ = vals[8].(time.Time)
	return rec, nil
}
