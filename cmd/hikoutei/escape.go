package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// shown is text that came from outside the CLI (a person's cell value, a
// record key, an error message quoting one) as it may be printed to a
// terminal: unchanged when it holds no control character, else quoted
// the way strconv.Quote does (ESC as \x1b, BEL as \a, a newline as \n, a
// bidirectional override as \u202e), so no escape sequence in a value
// reaches the operator's terminal (it could set the title, clear the
// screen or hide text). Invalid UTF-8 is quoted too.
func shown(s string) string {
	if !needsQuoting(s) {
		return s
	}
	return strconv.Quote(s)
}

// quoteControls is shown for text that is not a value but may quote one
// (an error message): the same rule.
func quoteControls(s string) string { return shown(s) }

// escapeControls is a message that may quote a value, for a terminal:
// its lines and tabs are kept, every other control character (and
// bidirectional formatting character) is written as its escape (\x1b,
// \a, \u202e), so a value quoted in an error cannot drive the terminal.
func escapeControls(s string) string {
	if !needsQuoting(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unicode.IsControl(r) || isBidiControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsQuoting(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unicode.IsControl(r) || isBidiControl(r) || r == utf8.RuneError {
			return true
		}
	}
	return false
}

// isBidiControl reports the formatting characters that reorder text on
// a terminal (embeddings, overrides, isolates, marks).
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}
