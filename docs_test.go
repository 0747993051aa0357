package hikoutei_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The writing rules of the user documentation: README.md, CHANGELOG.md and
// every page under docs/.
const (
	// readmeMaxLines keeps the README a landing page; the reference lives
	// under docs/.
	readmeMaxLines = 200
	// docsMaxLineRunes bounds every line outside fenced code blocks and
	// table rows (a table row cannot be wrapped).
	docsMaxLineRunes = 100
)

// generatedDocs are pages a generator writes (go generate ./events/): the
// line length rule does not hold them, the others do.
var generatedDocs = map[string]bool{"docs/events.md": true}

var (
	// testName is a Go test function's name: user text describes what is
	// tested, never which test does it.
	testName = regexp.MustCompile(`\bTest[A-Z0-9_]\w*`)
	// issueRef is a reference to an issue of the project's tracker.
	issueRef = regexp.MustCompile(`(?i)\bissues? #?\d+`)
	// guaranteeID is a guarantee (I01…) or field case (C01…) id, which
	// only docs/invariants.md, their reference, names.
	guaranteeID = regexp.MustCompile(`\b[IC]\d\d\b`)
	// mdLink is the target of a Markdown link or image.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// mdLinkText is a whole link, for heading slugs.
	mdLinkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// userDocs returns the documents the rules hold, as slash paths relative
// to the repository root.
func userDocs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil || len(pages) < 10 {
		t.Fatalf("docs/*.md: %v %v", pages, err)
	}
	docs := []string{"README.md", "CHANGELOG.md"}
	for _, p := range pages {
		docs = append(docs, filepath.ToSlash(p))
	}
	return docs
}

// docLine is one line of a document, and whether it lies in a fenced code
// block.
type docLine struct {
	n     int
	text  string
	fence bool
}

func docLines(t *testing.T, path string) []docLine {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return splitDoc(string(raw))
}

// splitDoc splits a document into lines, marking those of fenced code
// blocks.
func splitDoc(doc string) []docLine {
	var out []docLine
	fence := false
	for i, l := range strings.Split(doc, "\n") {
		marker := strings.HasPrefix(strings.TrimSpace(l), "```")
		if marker {
			fence = !fence
		}
		out = append(out, docLine{n: i + 1, text: l, fence: fence || marker})
	}
	return out
}

// The README is a landing page of at most readmeMaxLines lines.
func TestDocsReadmeIsALandingPage(t *testing.T) {
	lines := docLines(t, "README.md")
	if n := len(lines) - 1; n > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move reference text into a page under docs/", n, readmeMaxLines)
	}
}

// No line of the README, the changelog or a page under docs/ is longer
// than docsMaxLineRunes characters, except in fenced code blocks and
// table rows, and in generated pages.
func TestDocsLinesAreShort(t *testing.T) {
	for _, path := range userDocs(t) {
		if generatedDocs[path] {
			continue
		}
		for _, l := range docLines(t, path) {
			if l.fence || strings.HasPrefix(strings.TrimSpace(l.text), "|") {
				continue
			}
			if n := utf8.RuneCountInString(l.text); n > docsMaxLineRunes {
				t.Errorf("%s:%d: %d characters, at most %d: wrap it", path, l.n, n, docsMaxLineRunes)
			}
		}
	}
}

// User text names no test, no issue number and, outside
// docs/invariants.md, no guarantee or field-case id: it says what holds,
// not where the project tracks it.
func TestDocsNameNoTestIssueOrGuaranteeID(t *testing.T) {
	t.Parallel()
	for _, path := range userDocs(t) {
		for _, l := range docLines(t, path) {
			if m := testName.FindString(l.text); m != "" {
				t.Errorf("%s:%d names the test %s: say what is tested instead", path, l.n, m)
			}
			if m := issueRef.FindString(l.text); m != "" {
				t.Errorf("%s:%d refers to %q: say what changed instead", path, l.n, m)
			}
			if m := guaranteeID.FindString(l.text); m != "" && path != "docs/invariants.md" {
				t.Errorf("%s:%d names %s: only docs/invariants.md names guarantee ids; state the guarantee", path, l.n, m)
			}
		}
	}
}

// headingSlug is the anchor GitHub gives a heading: lower case, link
// syntax and punctuation dropped, spaces as dashes.
func headingSlug(h string) string {
	h = strings.ToLower(strings.TrimSpace(mdLinkText.ReplaceAllString(h, "$1")))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchorsOf returns the heading anchors of the Markdown file at path
// (a repeated heading gets -1, -2, … as on GitHub).
func anchorsOf(t *testing.T, path string) map[string]bool {
	t.Helper()
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range docLines(t, path) {
		if l.fence || !strings.HasPrefix(l.text, "#") {
			continue
		}
		h := strings.TrimLeft(l.text, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		s := headingSlug(h)
		if n, ok := seen[s]; ok {
			seen[s] = n + 1
			anchors[s+"-"+strconv.Itoa(n+1)] = true
			continue
		}
		seen[s] = 0
		anchors[s] = true
	}
	return anchors
}

// inlineCode is a code span, which may continue on the next line.
var inlineCode = regexp.MustCompile("`[^`]*`")

// proseLines returns the lines of the document at path with fenced blocks
// blank and code spans removed (keeping their line breaks), so text in
// code is never read as a link.
func proseLines(t *testing.T, path string) []docLine {
	t.Helper()
	var prose []string
	for _, l := range docLines(t, path) {
		if l.fence {
			prose = append(prose, "")
			continue
		}
		prose = append(prose, l.text)
	}
	joined := inlineCode.ReplaceAllStringFunc(strings.Join(prose, "\n"), func(span string) string {
		return strings.Repeat("\n", strings.Count(span, "\n"))
	})
	return splitDoc(joined)
}

// Every relative link of the README, the changelog and the pages under
// docs/ points to a file or directory of the repository, and a link to a
// heading of a Markdown file (#anchor) to a heading it has.
func TestDocsRelativeLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	checked := 0
	for _, path := range userDocs(t) {
		for _, l := range proseLines(t, path) {
			if l.fence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(l.text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				dest := path
				if file != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(path), file))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link to %s: no such file", path, l.n, target)
						continue
					}
				}
				checked++
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if anchors[dest] == nil {
					anchors[dest] = anchorsOf(t, dest)
				}
				if !anchors[dest][anchor] {
					t.Errorf("%s:%d: link to %s: %s has no heading #%s", path, l.n, target, dest, anchor)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d links: the extraction is broken", checked)
	}
}
