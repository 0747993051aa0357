package echo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestNameIsBoundedAndEscaped: a name is echoed whole when short and
// plain, cut at MaxRunes characters with an ellipsis when longer, and
// never carries a control character, a bidirectional override or an
// invalid byte to the terminal.
func TestNameIsBoundedAndEscaped(t *testing.T) {
	long := strings.Repeat("é", 1000)
	cases := map[string]string{
		"Last checked":                           "Last checked",
		"":                                       "",
		"a\x1b]0;pwned\x07b":                     `a\x1b]0;pwned\ab`,
		"line\nbreak\ttab":                       `line\nbreak\ttab`,
		"evil\u202eexe.txt":                      `evil\u202eexe.txt`,
		"bad\xffbyte":                            `bad\xffbyte`,
		"ok \uFFFD replacement":                  "ok \uFFFD replacement",
		long:                                     strings.Repeat("é", MaxRunes) + Ellipsis,
		strings.Repeat("x", MaxRunes):            strings.Repeat("x", MaxRunes),
		strings.Repeat("\x1b", MaxRunes+1):       strings.Repeat(`\x1b`, MaxRunes) + Ellipsis,
		strings.Repeat("a", MaxRunes-1) + "\xff": strings.Repeat("a", MaxRunes-1) + `\xff`,
	}
	for in, want := range cases {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
	if q := Quote(long + "\x1b"); utf8.RuneCountInString(q) != MaxRunes+3 || strings.ContainsRune(q, 0x1b) {
		t.Errorf("Quote of a long name: %q", q)
	}
	if q := Quote("a\x1b\u202e"); q != `"a\x1b\u202e"` {
		t.Errorf("Quote = %s", q)
	}
}

func FuzzName(f *testing.F) {
	f.Add("a\x1bb\u202e" + strings.Repeat("z", 100))
	f.Fuzz(func(t *testing.T, s string) {
		got := Name(s)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > MaxRunes*6+1 {
			t.Fatalf("Name(%q) = %q", s, got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || isBidiControl(r) {
				t.Fatalf("Name(%q) = %q holds %U", s, got, r)
			}
		}
	})
}
