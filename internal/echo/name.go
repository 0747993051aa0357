// Package echo bounds text that came from outside the program — a header
// a person typed in a sheet, a --map value, a tab or entity name — before
// an error message or the command line echoes it: a hostile sheet can
// neither flood the output nor drive the operator's terminal.
package echo

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxRunes is how many characters of a name are echoed; a longer name is
// cut there and ends with Ellipsis.
const MaxRunes = 64

// Ellipsis ends a name cut at MaxRunes.
const Ellipsis = "…"

// Name is s as it may be echoed unquoted: at most MaxRunes characters
// (then Ellipsis), every control character, bidirectional formatting
// character and invalid byte written as its escape (\x1b, \n, \u202e,
// \xff).
func Name(s string) string {
	s = cut(s)
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case unicode.IsControl(r) || isBidiControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Quote is s cut at MaxRunes (then Ellipsis) and quoted as strconv.Quote
// quotes (every control and formatting character escaped).
func Quote(s string) string { return strconv.Quote(cut(s)) }

// cut keeps the first MaxRunes characters of s (an invalid byte counts
// as one) and adds Ellipsis when it dropped some.
func cut(s string) string {
	n := 0
	for i := 0; i < len(s); n++ {
		if n == MaxRunes {
			return s[:i] + Ellipsis
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s
}

func needsEscape(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || isBidiControl(r) {
			return true
		}
	}
	return false
}

// isBidiControl reports the formatting characters that reorder text on a
// terminal (embeddings, overrides, isolates, marks).
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}
