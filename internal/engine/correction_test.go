package engine_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// F5: a Sync_Conflicts row's correction appends the row again only when
// its failure found it gone: the code it reads is the provider's.
func TestF5_TheCorrectionsAnchorNotFoundCodeIsTheProviders(t *testing.T) {
	if aggregates.CodeAnchorNotFound != sheetsio.ReasonAnchorNotFound {
		t.Fatalf("aggregates.CodeAnchorNotFound %q, the provider's %q", aggregates.CodeAnchorNotFound, sheetsio.ReasonAnchorNotFound)
	}
}
