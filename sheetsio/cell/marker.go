package cell

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MarkerPrefix starts every marker: the text a cell shows in place of a
// value Google Sheets cannot hold. It looks like a spreadsheet error
// (#REF!, #N/A) so a person sees at once that the cell is not data.
const MarkerPrefix = "#HIKOUTEI! "

// Unwritable is why a value cannot be written to a cell: a stable
// snake_case code carried by events, the read model and `hikoutei status`.
type Unwritable string

// Reasons a value cannot be written (the cell shows a marker instead).
const (
	// UnwritableTooLarge: text over Google's limit of 50,000 characters
	// per cell (the API answers 400 INVALID_ARGUMENT "Your input contains
	// more than the maximum of 50000 characters in a single cell.").
	UnwritableTooLarge Unwritable = "value_too_large"
	// UnwritableNotFinite: NaN or ±Inf (Sheets has no such number).
	UnwritableNotFinite Unwritable = "value_not_finite"
	// UnwritableOutOfRange: a time outside years 0001–9999, or an integer
	// a float column cannot hold exactly.
	UnwritableOutOfRange Unwritable = "value_out_of_range"
	// UnwritableUnsupported: a Go value the codec has no cell form for in
	// the column's kind (for example text in an integer column).
	UnwritableUnsupported Unwritable = "value_unsupported"
)

// Mark describes one value replaced by its marker: the reason and, for
// text too large, its length in characters (Unicode code points after NFC
// normalisation, as Google counts them); 0 otherwise. It never carries the
// value.
type Mark struct {
	Reason Unwritable
	Chars  int64
}

// Text is the marker a cell shows in place of the value:
//
//	#HIKOUTEI! value_too_large (50001 characters)
//	#HIKOUTEI! value_not_finite
//
// It is plain text, far below the cell limit, and a function of the mark
// only, so every writer of the same value writes the same marker and
// row hashes stay stable (I17).
func (m Mark) Text() string {
	if m.Chars > 0 {
		return fmt.Sprintf("%s%s (%d characters)", MarkerPrefix, m.Reason, m.Chars)
	}
	return MarkerPrefix + string(m.Reason)
}

// EncodeOrMark is Encode for a write that must not fail because of one
// value: a value Sheets cannot hold (Encode's *EncodeError) encodes to its
// marker text, and the mark says why. mark is nil for a writable value.
func EncodeOrMark(k Kind, v any) (enc any, mark *Mark) {
	enc, err := Encode(k, v)
	var ee *EncodeError
	if err == nil || !errors.As(err, &ee) {
		return enc, nil
	}
	m := &Mark{Reason: unwritableReason(ee.Reason)}
	if m.Reason == UnwritableTooLarge {
		s, _ := v.(string)
		m.Chars = int64(utf8.RuneCountInString(norm.NFC.String(s)))
	}
	return m.Text(), m
}

func unwritableReason(codec string) Unwritable {
	switch codec {
	case ReasonTooLong:
		return UnwritableTooLarge
	case ReasonNonFinite:
		return UnwritableNotFinite
	case ReasonOutOfRange:
		return UnwritableOutOfRange
	}
	return UnwritableUnsupported
}

// MarkOf reports whether canonical, a value of a column of kind k, cannot
// be written, and why (nil: writable).
func MarkOf(k Kind, canonical any) *Mark {
	_, m := EncodeOrMark(k, canonical)
	return m
}

// ShowsMarkerOf reports whether observed — a cell read back from a column
// of kind k — is the marker written in place of canonical because
// canonical cannot be written. Such a cell shows canonical state as well
// as the sheet can: it is never a person's edit. A text that merely looks
// like a marker while canonical is writable is an ordinary value (so a
// legitimate value can never be mistaken for a marker).
func ShowsMarkerOf(k Kind, observed, canonical any) bool {
	s, ok := observed.(string)
	if !ok || !strings.HasPrefix(s, MarkerPrefix) {
		return false
	}
	m := MarkOf(k, canonical)
	return m != nil && m.Text() == s
}
