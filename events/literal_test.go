package events

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// dottedWordRE matches a dotted word: identifier characters joined by
// single dots ("entity.persisted", "hikoutei.x.events"). A dot that ends
// a sentence is not part of the word.
var dottedWordRE = regexp.MustCompile(`[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*`)

// TestNoEventTypeLiterals: the catalogue is the one place an event type
// is spelled. Every .go file of the module (tests included; vendor and
// testdata directories, and the catalogue's own files events/catalogue.go
// and events/*_events.go, excluded) is parsed, and a string literal whose
// value is a catalogue type name, or contains one as a whole dotted word
// (inside SQL, a message, a subject), is reported as file:line with the
// Type constant to use instead. The list of names is events.Catalogue(),
// so the test follows the catalogue.
func TestNoEventTypeLiterals(t *testing.T) {
	root, pkgDir := moduleRootOf(t)
	isCatalogueFile := func(rel string) bool {
		dir, base := filepath.Split(rel)
		return filepath.Clean(dir) == pkgDir && (base == "catalogue.go" || strings.HasSuffix(base, "_events.go"))
	}

	names := map[string]bool{}
	for _, e := range Catalogue() {
		names[string(e.Type)] = true
	}
	constants := typeConstants(t, root, pkgDir, isCatalogueFile)

	var found, unparsed []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			if name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || isCatalogueFile(rel) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			unparsed = append(unparsed, fmt.Sprintf("%s: %v", filepath.ToSlash(rel), err))
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			value, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range dottedWordRE.FindAllStringIndex(value, -1) {
				word := value[m[0]:m[1]]
				if !names[word] {
					continue
				}
				use := "events." + constants[word]
				if constants[word] == "" {
					use = "its events.Type constant"
				}
				found = append(found, fmt.Sprintf("%s:%d: %s (%s: use %s)",
					filepath.ToSlash(rel), fset.Position(lit.Pos()).Line, excerpt(value, m[0], m[1]), word, use))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(unparsed) > 0 {
		t.Errorf("%d file(s) do not parse, so their literals were not checked:\n\t%s", len(unparsed), strings.Join(unparsed, "\n\t"))
	}
	if len(found) > 0 {
		sort.Strings(found)
		t.Errorf("%d string literal(s) spell a catalogue event type; name it through the catalogue's Type constants instead:\n\t%s",
			len(found), strings.Join(found, "\n\t"))
	}
}

// moduleRootOf returns the directory holding go.mod above the test's
// working directory (the events package), and the package's directory
// relative to it.
func moduleRootOf(t *testing.T) (root, pkgDir string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				t.Fatal(err)
			}
			return dir, rel
		}
		if filepath.Dir(dir) == dir {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}

// typeConstants maps each event type to the name of the Type constant
// the catalogue files declare for it.
func typeConstants(t *testing.T, root, pkgDir string, isCatalogueFile func(string) bool) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, pkgDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range paths {
		rel, _ := filepath.Rel(root, path)
		if !isCatalogueFile(rel) {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Type" {
					continue
				}
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if v, err := strconv.Unquote(lit.Value); err == nil {
								out[v] = name.Name
							}
						}
					}
				}
			}
		}
	}
	return out
}

// excerpt quotes value, or the part of a long value around [from, to).
func excerpt(value string, from, to int) string {
	const context = 24
	if len(value) <= 2*context+to-from {
		return strconv.Quote(value)
	}
	start, end := max(0, from-context), min(len(value), to+context)
	for start > 0 && !isRuneStart(value[start]) {
		start--
	}
	for end < len(value) && !isRuneStart(value[end]) {
		end++
	}
	q := strconv.Quote(value[start:end])
	if start > 0 {
		q = `"…` + q[1:]
	}
	if end < len(value) {
		q = q[:len(q)-1] + `…"`
	}
	return q
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
