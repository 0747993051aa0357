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
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package cell

import "github.com/hikoutei/hikoutei-go/events"

// Kind is the declared kind of a column: the canonical value kind of the
// event catalogue (events.Kind), the one enum the read model, the entity
// declarations and the cell codec share.
type Kind = events.Kind

// Column kinds. The Go type each kind encodes from and decodes to is given
// per constant; nil is always "blank" for every kind.
const (
	// String columns hold Go string values (NFC-normalised).
	String = events.KindString
	// Int columns hold Go int64 values.
	Int = events.KindInt
	// Float columns hold finite Go float64 values.
	Float = events.KindFloat
	// Bool columns hold Go bool values.
	Bool = events.KindBool
	// Time columns hold Go time.Time values (UTC, millisecond precision).
	Time = events.KindTime
)

// Column declares one column of a tab: its header Name, its Kind, and
// whether it is a Key column (business key: edge white space is malformed).
// A Person column holds a choice a person sets (Sync_Conflicts'
// resolution): the row's guard hash leaves it out, so the system's own
// writes to the row's other cells are never blocked by that choice;
// Choices, when set, are offered as the cell's dropdown.
type Column struct {
	Name    string
	Kind    Kind
	Key     bool
	Person  bool
	Choices []string
}
