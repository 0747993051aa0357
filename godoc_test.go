package hikoutei_test

import (
	"go/ast"
	"go/doc"
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

// parseDir parses the non-test Go files of dir into fset.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// exportedMethods lists the exported methods package dir declares on type
// name.
func exportedMethods(t *testing.T, dir, name string) []string {
	t.Helper()
	var out []string
	for _, f := range parseDir(t, token.NewFileSet(), dir) {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.IsExported() && receiverName(fd) == name {
				out = append(out, fd.Name.Name)
			}
		}
	}
	return out
}

func receiverName(fd *ast.FuncDecl) string {
	x := fd.Recv.List[0].Type
	if s, ok := x.(*ast.StarExpr); ok {
		x = s.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// go doc of the root package shows the methods (and fields) of every type
// it declares: none is an alias of an internal package's type, which a
// reader cannot look up, and an alias of a public package's type is left
// only for a type without exported methods (an alias hides them).
func TestGodocRootTypesShowTheirMethods(t *testing.T) {
	const module = "github.com/hikoutei/hikoutei-go/"
	aliases := 0
	fset := token.NewFileSet()
	files := parseDir(t, fset, ".")
	for _, f := range files {
		imports := map[string]string{}
		for _, im := range f.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			imports[filepath.Base(path)] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() || !ts.Assign.IsValid() {
				return true
			}
			aliases++
			sel, ok := ts.Type.(*ast.SelectorExpr)
			if !ok {
				t.Errorf("%s is an alias of %T", ts.Name.Name, ts.Type)
				return true
			}
			path := imports[sel.X.(*ast.Ident).Name]
			switch {
			case strings.Contains(path, "/internal/"):
				t.Errorf("%s is an alias of %s.%s, an internal type go doc cannot show", ts.Name.Name, path, sel.Sel.Name)
			case strings.HasPrefix(path, module):
				if ms := exportedMethods(t, strings.TrimPrefix(path, module), sel.Sel.Name); len(ms) > 0 {
					t.Errorf("%s is an alias of %s.%s, whose methods %v go doc of the root does not show", ts.Name.Name, path,
						sel.Sel.Name, ms)
				}
			}
			return true
		})
	}
	if aliases == 0 {
		t.Fatal("found no alias at all: the scan is broken")
	}
	// And go doc lists the methods of the types the root now declares.
	p, err := doc.NewFromFiles(fset, files, "github.com/hikoutei/hikoutei-go")
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, ty := range p.Types {
		for _, m := range ty.Methods {
			shown[ty.Name+"."+m.Name] = true
		}
	}
	for _, m := range []string{"SyncHealth.Failing", "SyncHealth.Err", "SyncHealth.Settled", "MirrorLag.Behind",
		"SubscriptionError.Unwrap", "MigrationError.Unwrap", "ChainPin.String", "ChainHash.String", "ShapeIncompatibility.String",
		"EnvError.Unwrap", "Store.WaitSynced"} {
		if !shown[m] {
			t.Errorf("go doc of the root does not show %s", m)
		}
	}
}

// Each engine package's doc comment says it carries no stability promise,
// pointing at docs/stability.md, which names the packages that do.
func TestEnginePackagesStateTheirStability(t *testing.T) {
	stability, err := os.ReadFile("docs/stability.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"gsync", "observe", "natsserver", "hikouteitest", "events", "aggregates", "projector"} {
		if !strings.Contains(string(stability), "`"+pkg+"`") {
			t.Errorf("docs/stability.md does not name the package %s", pkg)
		}
	}
	for _, dir := range []string{"events", "aggregates", "projector", "effects", "effects/outboxtest", "snapshots", "sheetsio",
		"sheetsio/cell", "sheetsio/layout", "sheetsio/a1", "sheetsio/emulator", "sheetsio/gsheets"} {
		said := false
		for _, f := range parseDir(t, token.NewFileSet(), dir) {
			if f.Doc != nil && strings.Contains(f.Doc.Text(), "Stability: ") && strings.Contains(f.Doc.Text(), "docs/stability.md") {
				said = true
			}
		}
		if !said {
			t.Errorf("the doc comment of package %s does not state its stability (docs/stability.md)", dir)
		}
	}
}
