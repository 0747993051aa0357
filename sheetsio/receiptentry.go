package sheetsio

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
)

// ReceiptEntry is one effect's entry in a receipt row's entries cell:
// what the batchUpdate that carried the effect's write certifies. Tab and
// Binding are empty when the entry was packed (see FormatReceiptEntries):
// its payload hash covers the target already (the hash of op, tab,
// anchor and values: I06), and the probe checks it against the effect's.
type ReceiptEntry struct {
	EffectID    string
	Op          string
	Tab         string
	Binding     string
	RowHash     string
	PayloadHash string
}

// The packed form of an entry (FormatReceiptEntries).
const (
	// packedMark starts the line of packed entries; that line has no tab,
	// while an entry line always has five, so no earlier receipt row
	// reads as packed.
	packedMark = "~"
	// packedSize is one packed entry: an op letter and 24 bytes in
	// unpadded base64url.
	packedSize    = 1 + 32
	effectPrefix  = "fx"
	payloadPrefix = "xxh64:"
)

var packedEncoding = base64.RawURLEncoding

// opLetters are the op letters of packed entries.
var opLetters = map[string]byte{"append": 'a', "update": 'u', "delete": 'd'}

func opOfLetter(c byte) string {
	switch c {
	case 'a':
		return "append"
	case 'u':
		return "update"
	case 'd':
		return "delete"
	}
	return ""
}

// Packed reports whether e has the engine's shapes and is written packed:
// an effect id "fx" and 16 hex digits, a row hash of 16 hex digits, a
// payload hash "xxh64:" and 16 hex digits (lower case), and an op.
func (e ReceiptEntry) Packed() bool {
	_, ok := packEntry(e)
	return ok
}

// Line is e as an entry line: its six fields separated by tabs.
func (e ReceiptEntry) Line() string {
	return strings.Join([]string{e.EffectID, e.Op, e.Tab, e.Binding, e.RowHash, e.PayloadHash}, "\t")
}

// PackedEntrySize is the characters a packed entry adds to an entries cell.
const PackedEntrySize = packedSize

// FormatReceiptEntries is the text of an entries cell listing es. Entries
// that are Packed come first, on one line: packedMark, then for each an op
// letter (a, u, d) and the 8 bytes of its effect id, row hash and payload
// hash each, in unpadded base64url (33 characters instead of about 100;
// Tab and Binding are left out). Every other entry follows on a line of
// its own (Line), as every earlier build wrote all of them.
func FormatReceiptEntries(es []ReceiptEntry) string {
	var packed strings.Builder
	var lines []string
	for _, e := range es {
		b, ok := packEntry(e)
		if !ok {
			lines = append(lines, e.Line())
			continue
		}
		if packed.Len() == 0 {
			packed.WriteString(packedMark)
		}
		packed.WriteByte(opLetters[e.Op])
		var enc [32]byte
		packedEncoding.Encode(enc[:], b[:])
		packed.Write(enc[:])
	}
	if packed.Len() > 0 {
		lines = append([]string{packed.String()}, lines...)
	}
	return strings.Join(lines, "\n")
}

// packEntry is the 24 bytes of e's hashes, when e is Packed.
func packEntry(e ReceiptEntry) ([24]byte, bool) {
	var b [24]byte
	id, ok1 := strings.CutPrefix(e.EffectID, effectPrefix)
	payload, ok2 := strings.CutPrefix(e.PayloadHash, payloadPrefix)
	ok := ok1 && ok2 && opLetters[e.Op] != 0 && hex16(b[0:8], id) && hex16(b[8:16], e.RowHash) && hex16(b[16:24], payload)
	return b, ok
}

// hex16 decodes 16 lower-case hex digits into dst (8 bytes).
func hex16(dst []byte, s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// entriesText is an entries cell split into its packed entries (without
// the mark) and its entry lines. broken: the packed line is not a whole
// number of packed entries.
type entriesText struct {
	packed string
	lines  []string
	broken bool
}

func splitEntries(text string) entriesText {
	first, rest, more := strings.Cut(text, "\n")
	if !strings.HasPrefix(first, packedMark) || strings.Contains(first, "\t") {
		return entriesText{lines: strings.Split(text, "\n")}
	}
	t := entriesText{packed: first[len(packedMark):]}
	t.broken = len(t.packed)%packedSize != 0 || len(t.packed) == 0
	if more {
		t.lines = strings.Split(rest, "\n")
	}
	return t
}

// count is the number of entries the cell lists.
func (t entriesText) count() int { return len(t.packed)/packedSize + len(t.lines) }

// packedID is the 8 bytes of an effect id of the packed shape.
func packedID(id string) (uint64, bool) {
	var b [8]byte
	hexID, ok := strings.CutPrefix(id, effectPrefix)
	if !ok || !hex16(b[:], hexID) {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[:]), true
}

// unpack decodes packed entry i; ok=false when it does not decode.
func (t entriesText) unpack(i int) (id uint64, b [24]byte, op string, ok bool) {
	p := t.packed[i*packedSize : (i+1)*packedSize]
	op = opOfLetter(p[0])
	n, err := packedEncoding.Decode(b[:], []byte(p[1:]))
	if op == "" || err != nil || n != len(b) {
		return 0, b, "", false
	}
	return binary.BigEndian.Uint64(b[:8]), b, op, true
}

// packedEntry is the entry of a packed entry's decoded bytes.
func packedEntry(b [24]byte, op string) ReceiptEntry {
	return ReceiptEntry{EffectID: effectPrefix + hex.EncodeToString(b[0:8]), Op: op,
		RowHash: hex.EncodeToString(b[8:16]), PayloadHash: payloadPrefix + hex.EncodeToString(b[16:24])}
}

// ParseReceiptEntries lists the entries of an entries cell, in either
// form, packed ones first (none for an empty cell). Errors: *Error CodeReceiptMalformed for a line
// without six fields or a packed entry that does not decode.
func ParseReceiptEntries(text string) ([]ReceiptEntry, error) {
	if text == "" {
		return nil, nil
	}
	t := splitEntries(text)
	if t.broken {
		return nil, newErr(CodeReceiptMalformed, nil, "packed receipt entries of %d characters", len(t.packed))
	}
	var out []ReceiptEntry
	for i := range len(t.packed) / packedSize {
		_, b, op, ok := t.unpack(i)
		if !ok {
			return nil, newErr(CodeReceiptMalformed, nil, "packed receipt entry %d does not decode", i)
		}
		out = append(out, packedEntry(b, op))
	}
	for _, line := range t.lines {
		e, err := lineEntry(line)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// lineEntry decodes an entry line.
func lineEntry(line string) (ReceiptEntry, error) {
	f := strings.Split(line, "\t")
	if len(f) != receiptFields {
		return ReceiptEntry{}, newErr(CodeReceiptMalformed, nil, "receipt entry has %d fields, want %d", len(f), receiptFields)
	}
	return ReceiptEntry{EffectID: f[0], Op: f[1], Tab: f[2], Binding: f[3], RowHash: f[4], PayloadHash: f[5]}, nil
}
