package hikoutei_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
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

// `go doc` shows an alias's doc comment but not the fields of the struct
// it names: so the doc comment of every root alias of a struct type names
// each field. An alias added to the root must be listed here, so a new
// struct alias cannot slip by undocumented.
func TestDocsAliasedStructsNameTheirFields(t *testing.T) {
	types := map[string]reflect.Type{
		"Conflict": reflect.TypeFor[hikoutei.Conflict](), "Acknowledge": reflect.TypeFor[hikoutei.Acknowledge](),
		"AdoptColumn": reflect.TypeFor[hikoutei.AdoptColumn](), "AdoptRow": reflect.TypeFor[hikoutei.AdoptRow](),
		"AdoptIssue": reflect.TypeFor[hikoutei.AdoptIssue](), "BackupInfo": reflect.TypeFor[hikoutei.BackupInfo](),
		"ConflictStatus": reflect.TypeFor[hikoutei.ConflictStatus](), "AckOutcome": reflect.TypeFor[hikoutei.AckOutcome](),
		"AdoptOutcome": reflect.TypeFor[hikoutei.AdoptOutcome](), "Op": reflect.TypeFor[hikoutei.Op](),
		"Actor": reflect.TypeFor[hikoutei.Actor](),
	}
	aliases := rootAliases(t)
	if len(aliases) == 0 {
		t.Fatal("found no alias in the root package: the scan is broken")
	}
	for name, doc := range aliases {
		typ, ok := types[name]
		if !ok {
			t.Errorf("alias %s is not listed in this test: add it (and, for a struct, name its fields in its doc comment)", name)
			continue
		}
		if typ.Kind() != reflect.Struct {
			continue
		}
		for i := range typ.NumField() {
			if f := typ.Field(i); f.IsExported() && !regexp.MustCompile(`\b`+f.Name+`\b`).MatchString(doc) {
				t.Errorf("the doc comment of %s does not name its field %s", name, f.Name)
			}
		}
	}
}
