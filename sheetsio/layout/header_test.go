package layout

import (
	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

func TestExtensionIsOnlyAMissingSuffixOfTheLayout(t *testing.T) {
	spec := conflictsTab()
	prefix := make([]any, 0, len(spec.Columns))
	for _, h := range spec.Headers()[:spec.Anchor+1] {
		prefix = append(prefix, h)
	}
	_, err := ValidateHeader(spec, prefix)
	var he *HeaderError
	if !errors.As(err, &he) {
		t.Fatalf("earlier header: %v", err)
	}
	if from, ok := he.Extension(spec); !ok || from != spec.Anchor+1 {
		t.Fatalf("extension %d %v, want from %d", from, ok, spec.Anchor+1)
	}
	_, err = ValidateHeader(spec, append(prefix[:3:3], prefix[4:]...)) // a column in the middle missing
	if !errors.As(err, &he) {
		t.Fatalf("a header missing a middle column: %v", err)
	}
	if _, ok := he.Extension(spec); ok {
		t.Fatal("a header missing a middle column was taken for an earlier layout")
	}
}

func TestRowHashLeavesPersonColumnsOut(t *testing.T) {
	spec := conflictsTab()
	row := make([]any, len(spec.Columns))
	row[0], row[spec.Anchor] = "cf1", "cf1"
	before := spec.RowHash(row)
	row[spec.ColumnIndex(ConflictResolution)] = "use sheet"
	if spec.RowHash(row) != before || spec.RowHash(row) == cell.VisibleHash(row) {
		t.Fatal("a choice changed the guard hash")
	}
	row[spec.ColumnIndex(ConflictResult)] = "resolved"
	if spec.RowHash(row) == before {
		t.Fatal("a system cell left the guard hash")
	}
}
