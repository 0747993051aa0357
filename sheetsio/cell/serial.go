package cell

import (
	"math"
	"time"
)

// serialEpochMillis is 1899-12-30T00:00:00Z in Unix milliseconds: serial 0.
var serialEpochMillis = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).UnixMilli()

const millisPerDay = 86_400_000

// TimeNumberFormatType and TimeNumberFormatPattern are the explicit number
// format (Sheets NumberFormat type and pattern) written with every Time cell
// so people see an unambiguous UTC date-time, not a bare serial number.
const (
	TimeNumberFormatType    = "DATE_TIME"
	TimeNumberFormatPattern = "yyyy-mm-dd hh:mm:ss.000"
)

// CanonicalTime returns t in UTC truncated to the millisecond: the precision
// a serial number keeps exactly, and the form equal times hash as.
func CanonicalTime(t time.Time) time.Time {
	return time.UnixMilli(t.UnixMilli()).UTC()
}

// SerialFromTime converts t to a Sheets serial number: days (fraction = time
// of day) since 1899-12-30T00:00:00Z, at millisecond precision.
func SerialFromTime(t time.Time) float64 {
	return float64(t.UnixMilli()-serialEpochMillis) / millisPerDay
}

// TimeFromSerial converts a serial number back to a UTC time, rounded to the
// nearest millisecond. ok is false for a non-finite serial or one outside
// years 0001–9999.
func TimeFromSerial(serial float64) (t time.Time, ok bool) {
	if math.IsNaN(serial) || math.IsInf(serial, 0) || math.Abs(serial) > 4e6 {
		return time.Time{}, false
	}
	ms := int64(math.Round(serial * millisPerDay))
	t = time.UnixMilli(ms + serialEpochMillis).UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, false
	}
	return t, true
}
