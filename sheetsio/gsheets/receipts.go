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

// receiptLine is the entry line of op (its receipt, once sent).
func receiptLine(op sheetsio.Op, r *sheetsio.OpResult) string {
	hash := r.WrittenHash
	if op.Kind == sheetsio.OpDelete {
		hash = ""
	}
	return strings.Join([]string{op.Receipt.EffectID, op.Kind.String(), op.Tab, r.Binding, hash, op.Receipt.PayloadHash}, "\t")
}

// receiptMeta is what every receipt row of one dispatch shares.
type receiptMeta struct {
	sheetID     int64
	fence       *sheetsio.Fence
	now         time.Time
	beforeWrite func() error // Batch.BeforeWrite
	check       *blindCheck  // set when the dispatch did not read first
}

// rows packs entry lines, in order, into receipt rows of at most
// maxEntriesChars of entries each. Errors: *cell.EncodeError (a fence or
// time a cell cannot hold).
func (m receiptMeta) rows(lines []string) ([]*sheets.RowData, error) {
	var out []*sheets.RowData
	for len(lines) > 0 {
		n, size := 0, 0
		for n < len(lines) && (n == 0 || size+len(lines[n])+1 <= maxEntriesChars) {
			size += len(lines[n]) + 1
			n++
		}
		rd, err := m.row(lines[:n])
		if err != nil {
			return nil, err
		}
		out, lines = append(out, rd), lines[n:]
	}
	return out, nil
}

func (m receiptMeta) row(lines []string) (*sheets.RowData, error) {
	var epoch, token any
	if m.fence != nil {
		epoch, token = m.fence.Epoch, m.fence.Token
	}
	entries := strings.Join(lines, "\n")
	id := fmt.Sprintf("rcpt-%016x", xxhash.Sum64String(fmt.Sprint(epoch, "\x00", m.now.UnixNano(), "\x00", entries)))
	spec := receiptsLayout()
	enc, err := cell.EncodeRow(spec.Columns, []any{id, epoch, token, m.now, int64(len(lines)), entries, id})
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
