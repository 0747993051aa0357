package cell

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/unicode/norm"
)

// RowShape is what a row digest needs of a tab: its width (cells beyond it
// are strays, not hashed), the columns hashed blank (Person columns) and
// the anchor column (-1: none).
type RowShape struct {
	Width  int
	Blank  []bool // by column: hashed as a blank cell
	Anchor int
}

// RowDigest is one values row as a digest sees it, computed from the wire
// bytes without decoding the cells: the row hash (the hex text VisibleHash
// gives for the row's cells cut/padded to the width, with the shape's
// Blank columns blanked), whether every cell within the width is blank,
// and the NFC text of the anchor cell (nil when blank or not text; it
// points into scratch space reused by the next digest).
type RowDigest struct {
	Hash   [16]byte
	Blank  bool
	Anchor []byte
}

// RowDigester digests rows one at a time, reusing its scratch space.
type RowDigester struct {
	h      xxhash.Digest
	enc    []byte // one cell's canonical encoding
	text   []byte // one string cell's text (unescaped, NFC)
	anchor []byte
}

// Digest digests raw, one values row as JSON (an array of strings,
// numbers, booleans and nulls). ok is false when raw is anything else
// (then only a full decode can say what the row shows): a digest never
// disagrees with VisibleHash over the decoded row, it declines instead.
func (d *RowDigester) Digest(raw []byte, shape RowShape) (out RowDigest, ok bool) {
	s := rowScanner{b: raw}
	if !s.open() {
		return out, false
	}
	d.h.Reset()
	d.anchor = d.anchor[:0]
	out.Blank = true
	pending := 0 // blank cells not yet written: trailing blanks are dropped
	for col := 0; ; col++ {
		tok, kind, more := s.next()
		if kind == tokBad {
			return out, false
		}
		if kind == tokEnd {
			break
		}
		if col < shape.Width {
			enc, blank, good := d.cell(tok, kind, col == shape.Anchor)
			if !good {
				return out, false
			}
			out.Blank = out.Blank && blank
			if blank || (col < len(shape.Blank) && shape.Blank[col]) {
				pending++
			} else {
				for ; pending > 0; pending-- {
					_, _ = d.h.Write([]byte{'z'})
				}
				_, _ = d.h.Write(enc)
			}
		}
		if !more {
			break
		}
	}
	if !s.done() {
		return out, false
	}
	out.Hash = hexBytes(d.h.Sum64())
	if len(d.anchor) > 0 {
		out.Anchor = d.anchor
	}
	return out, true
}

// cell encodes one cell canonically (appendCanonical's encoding); blank
// reports "" or null. When anchor, a text cell's NFC text is kept.
func (d *RowDigester) cell(tok []byte, kind tokKind, anchor bool) (enc []byte, blank, ok bool) {
	switch kind {
	case tokNull:
		return nil, true, true
	case tokTrue:
		return appendTagged(d.enc[:0], 'b', "true"), false, true
	case tokFalse:
		return appendTagged(d.enc[:0], 'b', "false"), false, true
	case tokNumber:
		f, err := strconv.ParseFloat(string(tok), 64)
		if err != nil {
			return nil, false, false
		}
		d.enc = appendNumber(d.enc[:0], f)
		return d.enc, false, true
	}
	if !d.unquote(tok) {
		return nil, false, false
	}
	if len(d.text) == 0 {
		return nil, true, true
	}
	if anchor {
		d.anchor = append(d.anchor[:0], d.text...)
	}
	d.enc = append(d.enc[:0], 's')
	d.enc = binary.AppendUvarint(d.enc, uint64(len(d.text)))
	d.enc = append(d.enc, d.text...)
	return d.enc, false, true
}

// unquote sets d.text to the NFC text of the JSON string tok (quotes
// included). A plain string (no escape, valid UTF-8) is used as it is;
// any other goes through encoding/json, as a full decode does.
func (d *RowDigester) unquote(tok []byte) bool {
	body := tok[1 : len(tok)-1]
	plain := utf8.Valid(body)
	for _, c := range body {
		if c == '\\' || c < 0x20 {
			plain = false
			break
		}
	}
	if !plain {
		var s string
		if json.Unmarshal(tok, &s) != nil {
			return false
		}
		body = []byte(s)
	}
	if norm.NFC.QuickSpan(body) == len(body) {
		d.text = append(d.text[:0], body...)
		return true
	}
	d.text = norm.NFC.Append(d.text[:0], body...)
	return true
}

// hexBytes is v as 16 lower-case hex digits (hex16 without a string).
func hexBytes(v uint64) [16]byte {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i], v = digits[v&0xf], v>>4
	}
	return b
}
