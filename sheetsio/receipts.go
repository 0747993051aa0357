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
// when the entries exceed maxEntriesChars): its "entries" cell lists one
// entry per effect (FormatReceiptEntries: packed, 33 characters, for the
// engine's effect ids and hashes, whose Tab and Binding are then empty;
// otherwise a line of six fields separated by a tab character:
//
//	effect_id  op  target_tab  target_binding  row_hash  payload_hash
//
// as every earlier build wrote them), and its "effects" cell the number of
// entries (a row whose count disagrees is malformed: never evidence). One
// row per dispatch instead of one per effect keeps receipts to a few cells
// per batch (I19: the write cost of a batch is its cells) and the hidden
// tab small.
type ReceiptRecord struct {
	ReceiptEntry
	Epoch     int64
	Token     string
	WrittenAt time.Time
	ReceiptID string
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
	w := wants{ids: want, packed: packedWants(want)}
	for _, row := range snap.Rows {
		scanReceiptRow(row, w, found, bad)
	}
	return pickReceipts(found, bad)
}

// scanReceiptRow adds the requested entries of one receipt row to found,
// or an error per requested id to bad when the row or entry is malformed.
func scanReceiptRow(row Row, want wants, found map[string][]ReceiptRecord, bad map[string]error) {
	spec := receiptsLayout()
	text, _ := row.Cells[spec.ColumnIndex(layout.ReceiptEntries)].(string)
	t := splitEntries(text)
	hits, lines := t.wanted(want)
	if len(hits) == 0 && len(lines) == 0 {
		return
	}
	hdr, err := decodeReceiptHeader(spec, row, t.count())
	if err == nil && t.broken {
		err = newErr(CodeReceiptMalformed, nil, "receipt row %d: packed entries do not decode", row.SheetRow)
	}
	add := func(id string, e ReceiptEntry, eerr error) {
		if eerr = errors.Join(err, eerr); eerr != nil {
			bad[id] = errors.Join(bad[id], eerr)
			return
		}
		rec := *hdr
		rec.ReceiptEntry = e
		found[id] = append(found[id], rec)
	}
	for _, e := range hits {
		add(e.EffectID, e, nil)
	}
	for _, line := range lines {
		id, _, _ := strings.Cut(line, "\t")
		e, eerr := lineEntry(line)
		add(id, e, eerr)
	}
}

// wants are the requested effect ids, and those of the packed shape as
// numbers.
type wants struct {
	ids    map[string]bool
	packed map[uint64]bool
}

// wanted returns the requested packed entries and entry lines of t. A
// packed entry that does not decode makes t broken.
func (t *entriesText) wanted(want wants) ([]ReceiptEntry, []string) {
	var hits []ReceiptEntry
	for i := range len(t.packed) / packedSize {
		id, b, op, ok := t.unpack(i)
		if !ok {
			t.broken = true
			continue
		}
		if want.packed[id] {
			hits = append(hits, packedEntry(b, op))
		}
	}
	var lines []string
	for _, line := range t.lines {
		if id, _, _ := strings.Cut(line, "\t"); want.ids[id] {
			lines = append(lines, line)
		}
	}
	return hits, lines
}

// packedWants are the requested ids of the packed shape, as numbers.
func packedWants(want map[string]bool) map[uint64]bool {
	out := map[uint64]bool{}
	for id := range want {
		if n, ok := packedID(id); ok {
			out[n] = true
		}
	}
	return out
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
