package a1

import "testing"

// FuzzParse checks that Parse never panics and that every parsed range
// formats to text that parses back to the same range.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"Sheet1!A1:B2", "'Bob''s Sheet'!A2:F", "A:A", "1:2", "A5:A", "Sheet1", "CO2", "'x'!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		text := r.String()
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its format %q fails: %v", s, text, err)
		}
		if back != r {
			t.Fatalf("round trip %q → %q: %+v != %+v", s, text, back, r)
		}
		_, _ = r.Bound(1000, 26)
	})
}
