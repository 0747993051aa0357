package hikoutei_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// goFiles parses every Go file of the repository (both modules), with
// comments, and calls fn with each; testdata and hidden directories are
// skipped.
func goFiles(t *testing.T, fn func(path string, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != "." && (name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		fn(path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// commentText is every comment of f, joined.
func commentText(f *ast.File) string {
	var b strings.Builder
	for _, g := range f.Comments {
		b.WriteString(g.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

// Every invariant (I01…) and field-case (C01…) id that a Go comment
// cites is defined in docs/invariants.md.
func TestEveryIDTheCodeCitesIsDefined(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/invariants.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^- \*\*([IC]\d\d)\*\*`).FindAllStringSubmatch(string(doc), -1) {
		defined[m[1]] = true
	}
	cited := regexp.MustCompile(`\b([IC]\d\d)\b`)
	missing := map[string][]string{}
	seen := 0
	goFiles(t, func(path string, f *ast.File) {
		for _, m := range cited.FindAllStringSubmatch(commentText(f), -1) {
			seen++
			if !defined[m[1]] {
				missing[m[1]] = append(missing[m[1]], path)
			}
		}
	})
	if seen == 0 {
		t.Fatal("found no cited id at all: the scan is broken")
	}
	for id, paths := range missing {
		t.Errorf("%s is cited in %v but not defined in docs/invariants.md", id, paths)
	}
}

// Comments outside tests point only at documents inside the repository:
// no design seeds ("seed 001"), issue numbers or ARCHITECTURE.md, which a
// reader of the module does not have.
func TestGodocCitesOnlyDocumentsInTheRepository(t *testing.T) {
	t.Parallel()
	outside := regexp.MustCompile(`(?i)\bseed \d{3}\b|\bissue[- ]\d+\b|ARCHITECTURE\.md|SHEETS-API-NOTES`)
	goFiles(t, func(path string, f *ast.File) {
		if strings.HasSuffix(path, "_test.go") {
			return
		}
		for _, m := range outside.FindAllString(commentText(f), -1) {
			t.Errorf("%s: its comments cite %q, which is not in the repository", path, m)
		}
	})
}

// Every package (commands and examples included) has a package doc
// comment in one of its non-test files.
func TestEveryPackageHasADocComment(t *testing.T) {
	t.Parallel()
	documented, all := map[string]bool{}, map[string]bool{}
	goFiles(t, func(path string, f *ast.File) {
		if strings.HasSuffix(path, "_test.go") {
			return
		}
		dir := filepath.Dir(path)
		all[dir] = true
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			documented[dir] = true
		}
	})
	if len(all) < 20 {
		t.Fatalf("found only %d packages: the scan is broken", len(all))
	}
	var missing []string
	for dir := range all {
		if !documented[dir] {
			missing = append(missing, dir)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("packages without a doc comment: %v", missing)
	}
}
