package gsheets

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
	"google.golang.org/api/sheets/v4"
)

// receiptEntry is the entry of op (its receipt, once sent).
func receiptEntry(op sheetsio.Op, r *sheetsio.OpResult) *sheetsio.ReceiptEntry {
	hash := r.WrittenHash
	if op.Kind == sheetsio.OpDelete {
		hash = ""
	}
	return &sheetsio.ReceiptEntry{EffectID: op.Receipt.EffectID, Op: op.Kind.String(), Tab: op.Tab, Binding: r.Binding,
		RowHash: hash, PayloadHash: op.Receipt.PayloadHash}
}

// entryChars is what e adds to an entries cell (packed, or a line and its
// line break); the packed entries' line adds packedMark and a line break
// once a row (entriesSlack).
func entryChars(e *sheetsio.ReceiptEntry) int {
	if e.Packed() {
		return sheetsio.PackedEntrySize
	}
	return len(e.Line()) + 1
}

// entriesSlack is what an entries cell holds besides its entries.
const entriesSlack = 2

// receiptMeta is what every receipt row of one dispatch shares.
type receiptMeta struct {
	sheetID     int64
	fence       *sheetsio.Fence
	now         time.Time
	beforeWrite func() error // Batch.BeforeWrite
	check       *blindCheck  // set when the dispatch did not read first
}

// rows packs entries, in order, into receipt rows of at most
// maxEntriesChars of entries each (FormatReceiptEntries). Errors:
// *cell.EncodeError (a fence or time a cell cannot hold).
func (m receiptMeta) rows(entries []sheetsio.ReceiptEntry) ([]*sheets.RowData, error) {
	var out []*sheets.RowData
	for len(entries) > 0 {
		n, size := 0, entriesSlack
		for n < len(entries) && (n == 0 || size+entryChars(&entries[n]) <= maxEntriesChars) {
			size += entryChars(&entries[n])
			n++
		}
		rd, err := m.row(entries[:n])
		if err != nil {
			return nil, err
		}
		out, entries = append(out, rd), entries[n:]
	}
	return out, nil
}

func (m receiptMeta) row(es []sheetsio.ReceiptEntry) (*sheets.RowData, error) {
	var epoch, token any
	if m.fence != nil {
		epoch, token = m.fence.Epoch, m.fence.Token
	}
	entries := sheetsio.FormatReceiptEntries(es)
	id := fmt.Sprintf("rcpt-%016x", xxhash.Sum64String(fmt.Sprint(epoch, "\x00", m.now.UnixNano(), "\x00", entries)))
	spec := receiptsLayout()
	enc, err := cell.EncodeRow(spec.Columns, []any{id, epoch, token, m.now, int64(len(es)), entries, id})
	if err != nil {
		return nil, err
	}
	return rowData(spec, enc), nil
}

// ReadReceipts returns the receipts of the given effect ids that exist
// (one enumeration + one batchGet). A missing id is simply absent from the
// map. Errors: read errors, plus those of ReceiptsFrom. A probe that also
// needs the target rows should call Snapshot(ctx, w, tab, layout.ReceiptsTab)
// and ReceiptsFrom instead: the same two requests cover both.
func (p *Provider) ReadReceipts(ctx context.Context, w *sheetsio.Workbook, effectIDs ...string) (map[string]sheetsio.ReceiptRecord, error) {
	snaps, err := p.Snapshot(ctx, w, layout.ReceiptsTab)
	if err != nil {
		return nil, err
	}
	return sheetsio.ReceiptsFrom(snaps[layout.ReceiptsTab], effectIDs...)
}

// maxEntriesChars bounds one entries cell; Google's limit is 50,000
// characters per cell.
const maxEntriesChars = 40000

// validReceipt: a receipt's fields must fit an entry line.
func validReceipt(r *sheetsio.Receipt) bool {
	return validAnchor(r.EffectID) && !strings.ContainsAny(r.PayloadHash, "\t\r\n") && len(r.PayloadHash) <= 256
}

// validAnchor: non-empty, at most 256 bytes, valid UTF-8, no edge white
// space and no line breaks or tabs (an anchor must survive a person's
// copy/paste and never look like a different anchor, C11).
func validAnchor(a string) bool {
	if a == "" || len(a) > 256 || !utf8.ValidString(a) || strings.ContainsAny(a, "\n\r\t") {
		return false
	}
	first, _ := utf8.DecodeRuneInString(a)
	last, _ := utf8.DecodeLastRuneInString(a)
	return !unicode.IsSpace(first) && !unicode.IsSpace(last)
}

// receiptsLayout is the receipts tab's layout, built once.
var receiptsLayout = sync.OnceValue(func() layout.TabSpec {
	s, _ := layout.NewSchema()
	spec, _ := s.Tab(layout.ReceiptsTab)
	return spec
})
