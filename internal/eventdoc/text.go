package main

import (
	"go/doc/comment"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A doc comment is written for Go readers; the document is for people
// who read records. prose turns one paragraph of doc text into markdown:
//
//   - a quoted word ("probe", "entity/<Entity>/<id>") becomes code;
//   - an event type name (entity.persisted) becomes a link to its section
//     (plain code in its own section);
//   - a Go identifier in idents (a payload type, a field of the struct at
//     hand) becomes its replacement, e.g. RetryAt → `retry_at`;
//   - < and > are escaped so that stream patterns never read as HTML.
type prose struct {
	idents map[string]string // Go identifier → markdown
	types  map[string]string // event type → anchor
	self   string            // the event type of the section at hand
}

// wordRE matches an identifier or a dotted word (entity.persisted).
var wordRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*`)

// paragraph renders text (one paragraph; line breaks become spaces).
func (p prose) paragraph(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '"')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(text[i+1:], '"')
		}
		if j < 0 {
			b.WriteString(p.plain(text))
			return b.String()
		}
		b.WriteString(p.plain(text[:i]))
		switch q := text[i+1 : i+1+j]; {
		case q == "":
			b.WriteString("`\"\"`")
		case p.types[q] != "" && q != p.self:
			b.WriteString(p.link(q))
		case !strings.ContainsAny(q, " `"):
			b.WriteString("`" + q + "`")
		default:
			b.WriteString(`"` + p.plain(q) + `"`)
		}
		text = text[i+2+j:]
	}
}

// plain renders text outside quotes.
func (p prose) plain(text string) string {
	var b strings.Builder
	last := 0
	for _, m := range wordRE.FindAllStringIndex(text, -1) {
		w := text[m[0]:m[1]]
		if m[0] > 0 && isWordByte(text[m[0]-1]) {
			continue // inside a word that starts with a digit: "2xx"
		}
		var repl string
		switch {
		case w == p.self:
			repl = "`" + w + "`"
		case p.types[w] != "":
			repl = p.link(w)
		default:
			repl = p.idents[w]
		}
		if repl == "" {
			continue
		}
		b.WriteString(escapeHTML(text[last:m[0]]))
		b.WriteString(repl)
		last = m[1]
	}
	b.WriteString(escapeHTML(text[last:]))
	return b.String()
}

func (p prose) link(t string) string {
	if t == p.self {
		return "`" + t + "`"
	}
	return "[`" + t + "`](#" + p.types[t] + ")"
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

var htmlEscaper = strings.NewReplacer("<", "&lt;", ">", "&gt;")

func escapeHTML(s string) string { return htmlEscaper.Replace(s) }

// paragraphs splits a doc comment into its paragraphs' text (code blocks
// and lists are kept as text: the catalogue's comments have none, and a
// cell of a table has room for one line only).
func paragraphs(text string) []string {
	var out []string
	for _, block := range new(comment.Parser).Parse(text).Content {
		var b strings.Builder
		switch x := block.(type) {
		case *comment.Paragraph:
			writeText(&b, x.Text)
		case *comment.Heading:
			writeText(&b, x.Text)
		case *comment.Code:
			b.WriteString(x.Text)
		case *comment.List:
			for _, item := range x.Items {
				for _, c := range item.Content {
					if para, ok := c.(*comment.Paragraph); ok {
						writeText(&b, para.Text)
						b.WriteString(" ")
					}
				}
			}
		}
		if s := strings.TrimSpace(b.String()); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func writeText(b *strings.Builder, text []comment.Text) {
	for _, t := range text {
		switch x := t.(type) {
		case comment.Plain:
			b.WriteString(string(x))
		case comment.Italic:
			b.WriteString(string(x))
		case *comment.Link:
			writeText(b, x.Text)
		case *comment.DocLink:
			writeText(b, x.Text)
		}
	}
}

// stripSubject drops the name a Go doc comment opens with when the
// context already shows what it documents: "RetryAt is when …" → "When
// …", "EntityPersisted records …" → "records …" (verb kept when keepVerb).
func stripSubject(text, name string, keepVerb bool) string {
	rest, ok := strings.CutPrefix(text, name+" ")
	if !ok {
		return text
	}
	if !keepVerb {
		for _, verb := range []string{"is ", "are "} {
			if r, ok := strings.CutPrefix(rest, verb); ok {
				return capitalize(r)
			}
		}
		return text
	}
	return rest
}

// stripFieldName drops the field name a field's doc opens with, since the
// table shows its key: "RetryAt is when …" → "When …", "Fields holds …"
// → "Holds …". A doc naming several fields ("Entity and ID name …") or
// going on otherwise ("ExpectedHash, when set, is …") is kept.
func stripFieldName(text, name string) string {
	if subjectRE.MatchString(text) {
		return text
	}
	rest, ok := strings.CutPrefix(text, name+" ")
	if r, _ := utf8.DecodeRuneInString(rest); !ok || !unicode.IsLower(r) {
		return text
	}
	for _, verb := range []string{"is ", "are "} {
		if r, ok := strings.CutPrefix(rest, verb); ok {
			return capitalize(r)
		}
	}
	return capitalize(rest)
}

// sentence capitalizes s and ends it with a full stop: line comments
// ("// when the probe is due") are often neither.
func sentence(s string) string {
	s = capitalize(s)
	if s != "" && !strings.ContainsAny(s[len(s)-1:], ".!?") {
		s += "."
	}
	return s
}

// dropSee removes the sentences of a paragraph that open with "See ".
func dropSee(para string) string {
	var kept []string
	for rest := strings.Join(strings.Fields(para), " "); rest != ""; {
		first := firstSentence(rest)
		rest = strings.TrimSpace(rest[len(first):])
		if !strings.HasPrefix(first, "See ") {
			kept = append(kept, first)
		}
	}
	return strings.Join(kept, " ")
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// firstSentence returns the first sentence of a paragraph.
func firstSentence(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	for i := 0; i+2 < len(text); i++ {
		if text[i] == '.' && text[i+1] == ' ' && unicode.IsUpper(rune(text[i+2])) {
			return text[:i+1]
		}
	}
	return text
}

// slug returns GitHub's anchor of a heading's text.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cell escapes s for a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
