package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// repoRoot is the repository root, seen from this package's directory.
const repoRoot = "../.."

// docPaths are the documents the docs tests hold to the code: the README,
// the changelog, bench/README.md, the bench journal's pages and every
// page under docs/.
func docPaths(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs/*.md: %v %v", pages, err)
	}
	journal, err := filepath.Glob(filepath.Join(repoRoot, "bench", "journal", "*.md"))
	if err != nil || len(journal) == 0 {
		t.Fatalf("bench/journal/*.md: %v %v", journal, err)
	}
	pages = append(pages, journal...)
	return append([]string{filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "CHANGELOG.md"),
		filepath.Join(repoRoot, "bench", "README.md")}, pages...)
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// configEnvVars are the environment variables internal/config declares:
// every string constant named Env… in its non-test files.
func configEnvVars(t *testing.T) map[string]bool {
	t.Helper()
	dir := filepath.Join(repoRoot, "internal", "config")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		collectEnvConsts(file, vars)
	}
	if len(vars) < 10 {
		t.Fatalf("found only %d Env constants in internal/config: %v", len(vars), vars)
	}
	return vars
}

func collectEnvConsts(file *ast.File, into map[string]bool) {
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range spec.Names {
			if !strings.HasPrefix(name.Name, "Env") || i >= len(spec.Values) {
				continue
			}
			if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					into[v] = true
				}
			}
		}
		return true
	})
}

// envToken is a name that looks like one of the product's variables.
var envToken = regexp.MustCompile(`HIKOUTEI_[A-Z0-9_]+|GOOGLE_APPLICATION_CREDENTIALS`)

// notVariables are HIKOUTEI_… names in the docs that are not environment
// variables: the replicated mode's KV bucket.
var notVariables = map[string]bool{"HIKOUTEI_LEASES": true}

// docEnvNames returns the variable names doc mentions; a name pattern such
// as HIKOUTEI_<STORE> or HIKOUTEI_REPL_<STORE> (a stream) is skipped.
func docEnvNames(doc string) []string {
	var out []string
	for _, loc := range envToken.FindAllStringIndex(doc, -1) {
		name := doc[loc[0]:loc[1]]
		if strings.HasSuffix(name, "_") || (loc[1] < len(doc) && doc[loc[1]] == '<') || notVariables[name] {
			continue
		}
		out = append(out, name)
	}
	return out
}

// Every environment variable the docs name is one internal/config
// declares: the docs never promise a variable the product does not read.
func TestDocsNameOnlyEnvironmentVariablesTheCodeReads(t *testing.T) {
	vars := configEnvVars(t)
	for _, path := range docPaths(t) {
		for _, name := range docEnvNames(readDoc(t, path)) {
			if !vars[name] {
				t.Errorf("%s names %s, which internal/config does not declare", filepath.Base(path), name)
			}
		}
	}
}

// Every environment variable internal/config declares is documented in
// docs/configuration.md or another page under docs/.
func TestEveryEnvironmentVariableIsDocumented(t *testing.T) {
	var all strings.Builder
	for _, path := range docPaths(t) {
		if filepath.Base(path) != "CHANGELOG.md" {
			all.WriteString(readDoc(t, path))
		}
	}
	documented := map[string]bool{}
	for _, name := range docEnvNames(all.String()) {
		documented[name] = true
	}
	var missing []string
	for v := range configEnvVars(t) {
		if !documented[v] {
			missing = append(missing, v)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("undocumented environment variables (add them to docs/configuration.md's table): %v", missing)
	}
}

var (
	fence      = regexp.MustCompile("(?s)```[^\n]*\n(.*?)```")
	inlineCode = regexp.MustCompile("`[^`\n]+`")
	// cliUse is `hikoutei` followed by a space: at the start, after a
	// space, a pipe, a $ prompt or a path (./cmd/hikoutei). Not after a
	// parenthesis: "keep system (hikoutei command)" is a cell's text.
	cliUse = regexp.MustCompile(`(?:^|[\s|$/])hikoutei `)
	// cliWord is a command word: a whole token of lower-case letters,
	// digits and dashes.
	cliWord = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// commandWords returns the command words after a use of hikoutei: the
// leading whole-word tokens, skipping the program's name when it follows
// a user or container also called hikoutei (sudo -u hikoutei hikoutei
// ping). A token that is not a whole word (a flag, a file name, a
// placeholder) ends them.
func commandWords(rest string) []string {
	var words []string
	for _, tok := range strings.Fields(rest) {
		if !cliWord.MatchString(tok) {
			break
		}
		if tok == "hikoutei" && len(words) == 0 {
			continue
		}
		words = append(words, tok)
	}
	return words
}

// codeOf returns the code of a Markdown document: fenced blocks and
// inline code spans, one string each.
func codeOf(doc string) []string {
	var out []string
	for _, m := range fence.FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	for _, span := range inlineCode.FindAllString(fence.ReplaceAllString(doc, ""), -1) {
		out = append(out, strings.Trim(span, "`"))
	}
	return out
}

// subcommand returns cmd's subcommand called name, or nil.
func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}

// checkCommandPath walks words down the command tree: the first word must
// be a command, and under a command with subcommands each further word
// must be one of them; the words after a leaf command are its arguments.
func checkCommandPath(root *cobra.Command, words []string) string {
	cmd := root
	for _, w := range words {
		next := subcommand(cmd, w)
		if next == nil {
			if cmd == root || cmd.HasSubCommands() {
				return "hikoutei " + strings.Join(words, " ") + ": no command " + strconv.Quote(w) + " under " + cmd.CommandPath()
			}
			return ""
		}
		cmd = next
	}
	return ""
}

// Every `hikoutei <command> [<subcommand>]` the docs show in code is a
// command of the CLI's tree (hidden ones included).
func TestDocsNameOnlyCommandsTheCLIHas(t *testing.T) {
	root := newRootCmd()
	seen := 0
	for _, path := range docPaths(t) {
		for _, code := range codeOf(readDoc(t, path)) {
			for _, line := range strings.Split(code, "\n") {
				for _, loc := range cliUse.FindAllStringIndex(line, -1) {
					words := commandWords(line[loc[1]:])
					if len(words) == 0 {
						continue
					}
					seen++
					if problem := checkCommandPath(root, words); problem != "" {
						t.Errorf("%s: %s", filepath.Base(path), problem)
					}
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("found only %d CLI uses in the docs: the extraction is broken", seen)
	}
}
