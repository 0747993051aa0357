package gsheets

import (
	"encoding/json"

	"google.golang.org/api/sheets/v4"
)

// Size estimates for chunking (MaxBatchBytes). They bound the JSON the
// client library sends from above without encoding anything: marshalling
// every unit just to measure it cost as much as sending it.
const (
	cellOverhead    = 64  // {"userEnteredValue":{"stringValue":""}} and separators
	formatOverhead  = 112 // "userEnteredFormat":{"numberFormat":{...}}
	rangeOverhead   = 256 // a GridRange / DimensionRange with its field names
	requestOverhead = 64  // {"updateCells":{...,"fields":"..."}}
)

// requestSize bounds the JSON size of one request the planner builds.
func requestSize(r *sheets.Request) int {
	switch {
	case r.UpdateCells != nil:
		n := requestOverhead + rangeOverhead
		for _, rd := range r.UpdateCells.Rows {
			n += rowSize(rd)
		}
		return n
	case r.DeleteDimension != nil:
		return requestOverhead + rangeOverhead
	}
	b, _ := json.Marshal(r) // rare kinds (the authority mirror goes through UpdateCells)
	return len(b)
}

// rowSize bounds the JSON size of one RowData.
func rowSize(rd *sheets.RowData) int {
	n := 16
	for _, cd := range rd.Values {
		n += cellOverhead
		if cd == nil {
			continue
		}
		if cd.UserEnteredFormat != nil {
			n += formatOverhead
		}
		if v := cd.UserEnteredValue; v != nil && v.StringValue != nil {
			n += escapedLen(*v.StringValue)
		} else {
			n += 32 // a number or bool
		}
	}
	return n
}

// escapedLen bounds the length of s as a JSON string body: control
// characters and HTML-sensitive or quoting bytes take up to 6 bytes.
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '"', c == '\\', c == '<', c == '>', c == '&':
			n += 5
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
			n += 3 // U+2028, U+2029 → \\u2028
		}
	}
	return n
}
