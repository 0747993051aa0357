package engine_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// F5: the failure codes a correction decides on (aggregates, which does
// not import sheetsio, restates them) are the provider's: a row's
// correction appends it again only when its failure found it gone
// (anchor_not_found), and a write that failed anchor_duplicated is
// superseded with no correction.
func TestF5_TheCorrectionsAnchorCodesAreTheProviders(t *testing.T) {
	for _, c := range []struct{ name, restated, provider string }{
		{"CodeAnchorNotFound", aggregates.CodeAnchorNotFound, sheetsio.ReasonAnchorNotFound},
		{"CodeAnchorDuplicated", aggregates.CodeAnchorDuplicated, sheetsio.ReasonAnchorDuplicated},
	} {
		if c.restated != c.provider {
			t.Errorf("aggregates.%s %q, the provider's %q", c.name, c.restated, c.provider)
		}
	}
}
