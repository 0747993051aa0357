// Package cell is the cell codec between typed Go values and Google Sheets
// cell values.
//
// Writes are RAW-equivalent: text is always sent as text (a string such as
// "=1+1" or "00123" is never interpreted), integers within ±2^53 as numbers
// and larger ones as decimal text, floats as numbers, booleans as booleans and
// times as serial numbers (days since 1899-12-30 UTC) under an explicit
// date-time number format. Reads are expected to use UNFORMATTED_VALUE +
// SERIAL_NUMBER and are decoded strictly into the column's declared Kind: a
// value that is not exactly what the system would have written for that kind
// is a *MalformedError with a stable reason code, never a best-effort guess.
package cell

import "fmt"

// Kind is the declared Go type of a column.
type Kind uint8

// Column kinds. The Go type each kind encodes from and decodes to is given
// per constant; nil is always "blank" for every kind.
const (
	// String columns hold Go string values (NFC-normalised).
	String Kind = iota + 1
	// Int columns hold Go int64 values.
	Int
	// Float columns hold finite Go float64 values.
	Float
	// Bool columns hold Go bool values.
	Bool
	// Time columns hold Go time.Time values (UTC, millisecond precision).
	Time
)

var kindNames = map[Kind]string{String: "string", Int: "int", Float: "float", Bool: "bool", Time: "time"}

// String returns the lower-case kind name ("string", "int", …).
func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k is one of the declared kinds.
func (k Kind) Valid() bool { _, ok := kindNames[k]; return ok }

// Column declares one column of a tab: its header Name, its Kind, and
// whether it is a Key column (business key: edge white space is malformed).
type Column struct {
	Name string
	Kind Kind
	Key  bool
}
