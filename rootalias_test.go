package hikoutei_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// rootAliases are the root package's exported type aliases (type X =
// pkg.Y) and their doc comments.
func rootAliases(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if ts.Assign.IsValid() && ts.Name.IsExported() {
					out[ts.Name.Name] = g.Doc.Text() + ts.Doc.Text()
				}
			}
		}
	}
	return out
}

// `go doc` shows an alias's doc comment but not the fields or methods of
// the engine type it names: so the root declares every struct it takes or
// returns, and keeps aliases only for the engine's plain enums (string
// types with the root's constants). An alias added to the root must be
// listed here, so a struct alias cannot slip by.
func TestDocsTheRootAliasesNoStruct(t *testing.T) {
	types := map[string]reflect.Type{
		"ConflictStatus": reflect.TypeFor[hikoutei.ConflictStatus](), "AckOutcome": reflect.TypeFor[hikoutei.AckOutcome](),
		"AdoptOutcome": reflect.TypeFor[hikoutei.AdoptOutcome](), "Op": reflect.TypeFor[hikoutei.Op](),
		"Actor": reflect.TypeFor[hikoutei.Actor](),
	}
	aliases := rootAliases(t)
	if len(aliases) == 0 {
		t.Fatal("found no alias in the root package: the scan is broken")
	}
	for name := range aliases {
		typ, ok := types[name]
		switch {
		case !ok:
			t.Errorf("alias %s is not listed in this test: add it, or declare a struct in the root", name)
		case typ.Kind() == reflect.Struct:
			t.Errorf("%s is an alias of the struct %s: declare it in the root so go doc shows its fields", name, typ)
		}
	}
}
