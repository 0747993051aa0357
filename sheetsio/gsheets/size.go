package gsheets

import (
	"unicode/utf8"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// Body sizes for chunking (MaxBatchBytes). A unit's bytes (unit.measure)
// are what it adds to a batchUpdate body: exactly the JSON of its
// requests and appended rows with their separators (rows are encoded when
// planned, encodeRow; a request is encoded once to measure it), and
// bounds of its share of what a chunk adds around them: the receipt row
// its entry joins and the response range verifying an update. What a body
// holds besides its units (its own members, one appendCells head per tab,
// a blind append's response ranges, a short receipt row's cells) is kept
// free in every chunk (bodyLimit), so a chunk fills its body up to
// MaxBatchBytes and never past it (TestChunksFillTheBodyLimit).
const (
	// bodyReserve is what bodyLimit keeps free of units in a body of
	// MaxBatchBytes: the batchUpdate's members (≈ 200 bytes), an
	// appendCells head per tab (≈ 120 bytes), a blind append's response
	// range per tab (≈ 40 bytes), the cells of a receipt row besides its
	// entries (≈ 500 bytes).
	bodyReserve = 16 << 10
	// receiptShare: a receipt row's cells besides its entries (≈ 500
	// bytes) are shared by up to maxEntriesChars of entries; each entry
	// line adds 1/receiptShare of its own size for them.
	receiptShare = 64
)

// bodyLimit is the bytes of units a chunk may carry in a body of at most
// maxBytes: maxBytes less bodyReserve (an eighth for small limits).
func bodyLimit(maxBytes int) int {
	return maxBytes - min(bodyReserve, maxBytes/8)
}

// requestSize is the JSON size of one request of a unit, with the comma
// that separates it from the next.
func requestSize(r *sheets.Request) int {
	e := bodyEncoder{}
	e.request(r)
	return len(e.b) + 1
}

// receiptSize bounds what an entry adds to the receipt row that carries
// it: a packed entry its 33 characters and one byte of the row's other
// cells (a full row shares them among over 1,200 packed entries); an entry
// line the line in the entries cell (escaped), the escaped line break
// joining it, and its share of the row's other cells.
func receiptSize(e *sheetsio.ReceiptEntry) int {
	switch {
	case e == nil:
		return 0
	case e.Packed():
		return sheetsio.PackedEntrySize + 1
	}
	n := jsonLen(e.Line())
	return n + n/receiptShare + 1
}

// checkRangeSize bounds what a verified update of the 0-based grid row
// adds to the body's responseRanges: the A1 range of that row, width
// columns from A, on the tab titled title, as a JSON string with its
// separator. The row a response names is never below it (a delete in the
// chunk only moves it up, finalRow), and a run of rows shares one range.
func checkRangeSize(title string, row, width int) int {
	r := a1.Range{Sheet: title, HasSheet: true, StartRow: row, EndRow: row + 1, StartCol: 0, EndCol: width}
	return jsonLen(r.String()) + 1
}

// jsonLen is len(appendString(nil, s)): the length of s as a JSON string,
// its quotes included.
func jsonLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n += asciiLen(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6 // \ufffd, \u2028, \u2029
		default:
			n += size
		}
		i += size
	}
	return n
}

// asciiLen is the length of ASCII byte c in a JSON string as appendString
// writes it.
func asciiLen(c byte) int {
	switch {
	case c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&':
		return 1
	case c == '"', c == '\\', c == '\b', c == '\f', c == '\n', c == '\r', c == '\t':
		return 2
	}
	return 6
}
