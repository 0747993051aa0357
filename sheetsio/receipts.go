package sheetsio

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// ReceiptRecord is one effect's receipt as read back: the evidence a probe
// uses to settle an uncertain effect (I06, I08). RowHash is the target row's
// visible hash right after the op ("" for a delete); compare it with the
// target row's current hash before settling the effect as applied. Epoch,
// Token and WrittenAt are those of the receipt row (the dispatch) that
// carries the entry; ReceiptID is that row's anchor.
//
// A receipt row covers the ops of one batchUpdate (split over several rows
// when the entries exceed maxEntriesChars): its "entries" cell holds one
// line per effect, fields separated by a tab character:
//
//	effect_id  op  target_tab  target_binding  row_hash  payload_hash
//
// and its "effects" cell the number of lines (a row whose count disagrees
// is malformed: never evidence). One row per dispatch instead of one per
// effect keeps receipts to a few cells per batch (I19: the write cost of a
// batch is its cells) and the hidden tab small.
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
	ReceiptID   string
}

// receiptFields is the number of tab-separated fields of an entry line.
const receiptFields = 6

func receiptsSpec(s *layout.Schema) layout.TabSpec {
	spec, _ := s.Tab(layout.ReceiptsTab)
	return spec
}

// receiptsLayout is the receipts tab's layout, built once (it was rebuilt
// for every receipt row scanned).
var receiptsLayout = sync.OnceValue(func() layout.TabSpec {
	s, _ := layout.NewSchema()
	return receiptsSpec(s)
})

// ReceiptsFrom extracts the receipts of effectIDs from a snapshot of the
// receipts tab. Errors (all joined; the ids concerned are left out of the
// map — never use those as evidence): the tab's own Err (CodeTabMissing,
// CodeHeaderDrift); CodeReceiptMalformed when a receipt row naming a
// requested id does not decode, or its entry line or effect count is
// wrong; CodeReceiptAmbiguous when one id has several entries.
func ReceiptsFrom(snap *TabSnapshot, effectIDs ...string) (map[string]ReceiptRecord, error) {
	if snap == nil || snap.Tab != layout.ReceiptsTab {
		return nil, newErr(CodeInvalidBatch, nil, "not a receipts snapshot")
	}
	if snap.Err != nil {
		return nil, snap.Err
	}
	want := make(map[string]bool, len(effectIDs))
	for _, id := range effectIDs {
		want[id] = true
	}
	found, bad := map[string][]ReceiptRecord{}, map[string]error{}
	for _, row := range snap.Rows {
		scanReceiptRow(row, want, found, bad)
	}
	return pickReceipts(found, bad)
}

// scanReceiptRow adds the requested entries of one receipt row to found,
// or an error per requested id to bad when the row or line is malformed.
func scanReceiptRow(row Row, want map[string]bool, found map[string][]ReceiptRecord, bad map[string]error) {
	spec := receiptsLayout()
	entries, _ := row.Cells[spec.ColumnIndex(layout.ReceiptEntries)].(string)
	lines := strings.Split(entries, "\n")
	var hdr *ReceiptRecord
	var hdrErr error
	for _, line := range lines {
		id, _, _ := strings.Cut(line, "\t")
		if !want[id] {
			continue
		}
		if hdr == nil && hdrErr == nil {
			hdr, hdrErr = decodeReceiptHeader(spec, row, len(lines))
		}
		rec, err := decodeReceiptLine(hdr, hdrErr, line)
		if err != nil {
			bad[id] = errors.Join(bad[id], err)
			continue
		}
		found[id] = append(found[id], rec)
	}
}

// decodeReceiptHeader decodes a receipt row's shared cells and checks its
// effect count against its entry lines.
func decodeReceiptHeader(spec layout.TabSpec, row Row, lines int) (*ReceiptRecord, error) {
	vals, err := cell.DecodeRow(spec.Columns, row.Cells)
	if err != nil {
		return nil, newErr(CodeReceiptMalformed, err, "receipt row %d", row.SheetRow)
	}
	n, _ := vals[spec.ColumnIndex(layout.ReceiptEffects)].(int64)
	if n != int64(lines) {
		return nil, newErr(CodeReceiptMalformed, nil, "receipt row %d counts %d effects, lists %d", row.SheetRow, n, lines)
	}
	h := &ReceiptRecord{ReceiptID: row.Anchor}
	h.Epoch, _ = vals[spec.ColumnIndex(layout.ReceiptEpoch)].(int64)
	h.Token, _ = vals[spec.ColumnIndex(layout.ReceiptToken)].(string)
	h.WrittenAt, _ = vals[spec.ColumnIndex(layout.ReceiptWrittenAt)].(time.Time)
	return h, nil
}

func decodeReceiptLine(hdr *ReceiptRecord, hdrErr error, line string) (ReceiptRecord, error) {
	if hdrErr != nil {
		return ReceiptRecord{}, hdrErr
	}
	f := strings.Split(line, "\t")
	if len(f) != receiptFields {
		return ReceiptRecord{}, newErr(CodeReceiptMalformed, nil, "receipt entry has %d fields, want %d", len(f), receiptFields)
	}
	rec := *hdr
	rec.EffectID, rec.Op, rec.Tab, rec.Binding, rec.RowHash, rec.PayloadHash = f[0], f[1], f[2], f[3], f[4], f[5]
	return rec, nil
}

func pickReceipts(found map[string][]ReceiptRecord, bad map[string]error) (map[string]ReceiptRecord, error) {
	out := map[string]ReceiptRecord{}
	var errs []error
	for id, recs := range found {
		switch {
		case bad[id] != nil:
		case len(recs) > 1:
			errs = append(errs, newErr(CodeReceiptAmbiguous, nil, "%d receipt entries share one effect id", len(recs)))
		default:
			out[id] = recs[0]
		}
	}
	for _, err := range bad {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}
