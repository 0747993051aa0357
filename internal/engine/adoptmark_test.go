package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// A file of the person's own whose name only starts like a mark's
// (.adopt-x.json) is not an interrupted adoption: status must not tell
// them to remove it. A mark of the real shape that cannot be read still is.
func TestAFileNamedLikeAnAdoptMarkIsNotAnAdoption(t *testing.T) {
	dir := t.TempDir()
	broken := adoptMarkName("Parts")
	for name, body := range map[string]string{
		".adopt-x.json":                 `{"tab":"mine","pid":0}`,
		".adopt-notes.json":             `notes`,
		".adopt-0123456789AB.json":      `{}`,
		adoptMarkName("Parts") + ".tmp": `{}`,
		broken:                          `not json`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := InterruptedAdoptions(dir)
	if len(got) != 1 || got[0].File != broken || got[0].Tab != "" {
		t.Fatalf("interrupted adoptions %+v, want only the unreadable mark %s", got, broken)
	}
}
