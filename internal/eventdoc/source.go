package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// source is what the generator reads from the Go files of the events
// package: the doc comments the catalogue's runtime facts do not carry.
type source struct {
	moduleDir string
	types     map[string]*typeSrc    // by Go type name
	enums     map[string][]enumValue // string constants by their named type
	families  map[string]string      // file base name → doc of its block of Type constants
	order     map[string]int         // event type → rank of its constant in declaration order
	// upcasts holds, by payload Go type and then by the schema it upcasts
	// from, the doc comment of the registered upcast function.
	upcasts map[string]map[uint32]string
}

// typeSrc is one type declaration of the events package.
type typeSrc struct {
	Name string
	Doc  string // the type's doc comment (go/doc: spec or declaration doc)
	File string // base name of the file declaring it
	// Of is the named type a definition like `type RowQuarantined Evidence`
	// is based on ("" for a struct or another kind of type).
	Of string
	// Fields holds each struct field's doc by Go field name: its doc
	// comment, else its line comment, else the doc of an earlier field
	// that names it ("Entity and ID name …").
	Fields map[string]string
}

// enumValue is one string constant of a named string type.
type enumValue struct {
	Name, Value, Doc string
}

// locate returns the directory, module directory and Go files (as the
// go command selects them for this platform) of package pkgPath. It asks
// the go command, so it works from go generate, go test or go run in any
// directory of the module.
func locate(pkgPath string) (dir, moduleDir string, files []string, err error) {
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}\n{{.Module.Dir}}\n{{range .GoFiles}}{{.}}\n{{end}}", pkgPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", nil, fmt.Errorf("go list %s: %v: %s", pkgPath, err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		return "", "", nil, fmt.Errorf("go list %s: unexpected output %q", pkgPath, out)
	}
	return lines[0], lines[1], lines[2:], nil
}

// loadSource parses the events package's source.
func loadSource(pkgPath string) (*source, error) {
	dir, moduleDir, names, err := locate(pkgPath)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), b, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	funcDocs := map[string]string{}
	var inits []*ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				if fd.Name.Name == "init" {
					inits = append(inits, fd)
				} else {
					funcDocs[fd.Name.Name] = fd.Doc.Text()
				}
			}
		}
	}
	// go/doc attaches each type's doc whether it is written on the
	// declaration or on the spec; PreserveAST keeps the field comments.
	pkg, err := doc.NewFromFiles(fset, files, pkgPath, doc.AllDecls|doc.PreserveAST)
	if err != nil {
		return nil, err
	}
	s := &source{
		moduleDir: moduleDir,
		types:     map[string]*typeSrc{},
		enums:     map[string][]enumValue{},
		families:  map[string]string{},
		order:     map[string]int{},
		upcasts:   map[string]map[uint32]string{},
	}
	values := pkg.Consts
	for _, t := range pkg.Types {
		s.types[t.Name] = newTypeSrc(fset, t)
		values = append(values, t.Consts...)
	}
	// Files in go list order, declarations in source order.
	sort.SliceStable(values, func(i, j int) bool { return values[i].Decl.Pos() < values[j].Decl.Pos() })
	for _, v := range values {
		s.addConsts(fset, v)
	}
	for _, fd := range inits {
		if err := s.addRegistrations(fd, funcDocs); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func newTypeSrc(fset *token.FileSet, t *doc.Type) *typeSrc {
	ts := &typeSrc{Name: t.Name, Doc: t.Doc, File: filepath.Base(fset.Position(t.Decl.Pos()).Filename)}
	for _, spec := range t.Decl.Specs {
		spec, ok := spec.(*ast.TypeSpec)
		if !ok || spec.Name.Name != t.Name {
			continue
		}
		switch x := spec.Type.(type) {
		case *ast.Ident:
			ts.Of = x.Name
		case *ast.StructType:
			ts.Fields = fieldDocs(x)
		}
	}
	return ts
}

// subjectRE matches a doc comment that opens with several field names,
// e.g. "VisibleRevision and VisibleHash are …".
var subjectRE = regexp.MustCompile(`^([A-Z]\w*(?:, [A-Z]\w*)*) and ([A-Z]\w*)\b`)

// fieldDocs returns each field's doc. A field without a comment of its
// own takes the doc of the nearest documented field before it when that
// doc opens by naming it ("Entity and ID name the entity …" documents ID
// too).
func fieldDocs(st *ast.StructType) map[string]string {
	out := map[string]string{}
	var shared string
	var names []string
	for _, f := range st.Fields.List {
		text := strings.TrimSpace(f.Doc.Text())
		if text == "" {
			text = strings.TrimSpace(f.Comment.Text())
		}
		if text != "" {
			shared, names = text, nil
			if m := subjectRE.FindStringSubmatch(text); m != nil {
				names = append(strings.Split(m[1], ", "), m[2])
			}
		}
		for _, n := range f.Names {
			switch {
			case text != "":
				out[n.Name] = text
			case contains(names, n.Name):
				out[n.Name] = shared
			default:
				out[n.Name] = ""
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addConsts records the string constants of named types in v, and the doc
// of a block of event Type constants as its file's family doc.
func (s *source) addConsts(fset *token.FileSet, v *doc.Value) {
	for _, spec := range v.Decl.Specs {
		vs, ok := spec.(*ast.ValueSpec)
		if !ok || vs.Type == nil || len(vs.Names) != len(vs.Values) {
			continue
		}
		typ, ok := vs.Type.(*ast.Ident)
		if !ok {
			continue
		}
		text := strings.TrimSpace(vs.Doc.Text())
		if text == "" {
			text = strings.TrimSpace(vs.Comment.Text())
		}
		for i, n := range vs.Names {
			lit, ok := vs.Values[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			val, err := strconv.Unquote(lit.Value)
			if err != nil {
				continue
			}
			if typ.Name == "Type" {
				s.families[filepath.Base(fset.Position(v.Decl.Pos()).Filename)] = v.Doc
				if _, dup := s.order[val]; !dup {
					s.order[val] = len(s.order)
				}
				continue
			}
			s.enums[typ.Name] = append(s.enums[typ.Name], enumValue{Name: n.Name, Value: val, Doc: text})
		}
	}
}

// addRegistrations reads the register[P](schema, stream, upcast{from, fn}…)
// calls of an init function and records each upcast function's doc.
func (s *source) addRegistrations(fd *ast.FuncDecl, funcDocs map[string]string) error {
	var err error
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || err != nil {
			return err == nil
		}
		ix, ok := call.Fun.(*ast.IndexExpr)
		if !ok {
			return true
		}
		if fn, ok := ix.X.(*ast.Ident); !ok || fn.Name != "register" {
			return true
		}
		payload, ok := ix.Index.(*ast.Ident)
		if !ok {
			return true
		}
		for _, arg := range call.Args[min(2, len(call.Args)):] {
			from, fn, ok := upcastArg(arg)
			if !ok {
				err = fmt.Errorf("events: cannot read the upcast argument of register[%s]", payload.Name)
				return false
			}
			if s.upcasts[payload.Name] == nil {
				s.upcasts[payload.Name] = map[uint32]string{}
			}
			// "upcastX rewrites …" → "rewrites …"
			s.upcasts[payload.Name][from] = strings.TrimPrefix(funcDocs[fn], fn+" ")
		}
		return true
	})
	return err
}

// upcastArg reads upcast{from, fn} or upcast{from: …, fn: …}.
func upcastArg(e ast.Expr) (from uint32, fn string, ok bool) {
	cl, isLit := e.(*ast.CompositeLit)
	if !isLit || len(cl.Elts) != 2 {
		return 0, "", false
	}
	elts := make([]ast.Expr, 2)
	for i, el := range cl.Elts {
		if kv, isKV := el.(*ast.KeyValueExpr); isKV {
			switch key, _ := kv.Key.(*ast.Ident); {
			case key != nil && key.Name == "from":
				elts[0] = kv.Value
			case key != nil && key.Name == "fn":
				elts[1] = kv.Value
			}
		} else {
			elts[i] = el
		}
	}
	lit, ok1 := elts[0].(*ast.BasicLit)
	id, ok2 := elts[1].(*ast.Ident)
	if !ok1 || !ok2 || lit.Kind != token.INT {
		return 0, "", false
	}
	n, err := strconv.ParseUint(lit.Value, 0, 32)
	if err != nil {
		return 0, "", false
	}
	return uint32(n), id.Name, true
}
