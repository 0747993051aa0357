package emulator

import "testing"

// Date-times far from 1899 (the store writes any year 0001–9999) are shown
// as their date, not wrapped around: a time.Duration overflowed past about
// 292 years and showed 9999-12-31 as 1816-03-30.
func TestFormatsDateTimesFarFromTheEpoch(t *testing.T) {
	layout := goLayout("yyyy-mm-dd hh:mm:ss.000", fmtDateTime)
	for serial, want := range map[float64]string{
		2958465.999988426: "9999-12-31 23:59:59.000",
		-693593:           "0001-01-01 00:00:00.000",
		46357.5:           "2026-12-01 12:00:00.000",
	} {
		if got := formatNumber(serial, fmtDateTime, layout); got != want {
			t.Errorf("serial %v shows %q, want %q", serial, got, want)
		}
	}
}

// A date typed far from 1899 is parsed to its own serial, not the ~292-year
// bound of a time.Duration (9999-12-31 became 2192-04-11).
func TestParsesTypedDatesFarFromTheEpoch(t *testing.T) {
	for in, want := range map[string]float64{"9999-12-31": 2958465, "0001-01-01": -693593, "9999-12-31 12:00": 2958465.5} {
		if got := parseTyped(in); got.Kind != kindNumber || got.Num != want {
			t.Errorf("parseTyped(%q) = %+v, want serial %v", in, got, want)
		}
	}
}
