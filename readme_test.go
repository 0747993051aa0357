package hikoutei_test

import (
	"os"
	"strings"
	"testing"
)

// goBlock returns the first ```go block after the heading line of the
// Markdown file at path.
func goBlock(t *testing.T, path, heading string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, sect, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", path, heading)
	}
	_, block, ok := strings.Cut(sect, "```go\n")
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 {
		t.Fatalf("%s: the %q section has no ```go block", path, heading)
	}
	return block
}

// The README's first program is examples/quickstart/main.go, verbatim:
// examples/examples_test.go builds and runs that program, so the README
// shows code that builds and does what it says.
func TestReadmeFirstProgramIsTheQuickstartExample(t *testing.T) {
	readme := goBlock(t, "README.md", "## Your first program")
	src, err := os.ReadFile("examples/quickstart/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if readme != string(src) {
		t.Fatalf("README's first program differs from examples/quickstart/main.go; copy the file into README.md\n--- README\n%s\n--- examples/quickstart/main.go\n%s", readme, src)
	}
}

// The tour of the API in docs/concepts.md is the text of Example (with
// its Airport type), which `go test` compiles and runs against its
// // Output: the page shows code that builds and does what it says.
func TestDocsTourIsTheExample(t *testing.T) {
	doc := goBlock(t, "docs/concepts.md", "## A tour of the API")
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, ex, ok := strings.Cut(string(src), "// docs tour begins.\n\n")
	ex, _, ok2 := strings.Cut(ex, "\n// docs tour ends.\n")
	if !ok || !ok2 {
		t.Fatal("example_test.go lacks the docs tour markers")
	}
	if doc != ex {
		t.Fatalf("docs/concepts.md's tour differs from example_test.go's; copy the text between the markers into the page\n--- docs/concepts.md\n%s\n--- example_test.go\n%s", doc, ex)
	}
}
