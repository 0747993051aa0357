package hikoutei_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every guarantee docs/invariants.md states as built has a test named
// after its id (TestI28_…, or a conformance case "I07_…"); one marked
// planned has none yet.
func TestEveryStatedInvariantHasATestNamedAfterIt(t *testing.T) {
	doc, err := os.ReadFile("docs/invariants.md")
	if err != nil {
		t.Fatal(err)
	}
	var tests strings.Builder
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		tests.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	all := tests.String()
	stated := regexp.MustCompile(`(?m)^- \*\*(I\d\d)\*\* (\*planned)?`)
	found := 0
	for _, m := range stated.FindAllStringSubmatch(string(doc), -1) {
		found++
		named := strings.Contains(all, "func Test"+m[1]+"_") || strings.Contains(all, `"`+m[1]+"_")
		if m[2] == "" && !named {
			t.Errorf("%s is stated as built but no test is named after it", m[1])
		}
	}
	if found != 38 {
		t.Fatalf("docs/invariants.md states %d invariants, want I01–I38", found)
	}
}
