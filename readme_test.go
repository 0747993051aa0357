package hikoutei_test

import (
	"os"
	"strings"
	"testing"
)

// quickStart returns the Go block of the README's "Quick start: embedding"
// section and the quick-start part of example_test.go.
func quickStart(t *testing.T) (readme, example string) {
	t.Helper()
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sect, ok := strings.Cut(string(raw), "## Quick start: embedding\n")
	if !ok {
		t.Fatal(`README.md has no "## Quick start: embedding" section`)
	}
	_, block, ok := strings.Cut(sect, "```go\n")
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 {
		t.Fatal("the quick start section has no ```go block")
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, ex, ok := strings.Cut(string(src), "// README quick start begins.\n\n")
	ex, _, ok2 = strings.Cut(ex, "\n// README quick start ends.\n")
	if !ok || !ok2 {
		t.Fatal("example_test.go lacks the README quick start markers")
	}
	return block, ex
}

// The README's quick start is the text of Example (with its Airport type),
// which `go test` compiles and runs against its // Output: the README
// shows code that builds and does what it says.
func TestREADMEQuickStartIsTheExample(t *testing.T) {
	readme, example := quickStart(t)
	if readme != example {
		t.Fatalf("README quick start differs from example_test.go's; copy the text between the markers into README.md\n--- README\n%s\n--- example_test.go\n%s", readme, example)
	}
}
