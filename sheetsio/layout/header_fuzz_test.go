package layout

import (
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// FuzzValidateHeader checks the fail-closed property: a header row is
// accepted only if every expected header sits exactly at its position and
// every other cell is blank or a retired column; anything else is
// reported, never resolved.
func FuzzValidateHeader(f *testing.F) {
	f.Add("id,status,status")
	f.Add("id,name,,")
	f.Add("status,id")
	f.Add("id,status")
	f.Fuzz(func(t *testing.T, csv string) {
		spec := TabSpec{Name: "T", Columns: []cell.Column{{Name: "id"}, {Name: "status"}}, Anchor: -1}
		var got []any
		for _, c := range strings.Split(csv, ",") {
			got = append(got, c)
		}
		rep, err := ValidateHeader(spec, got)
		if err != nil {
			return
		}
		for i, c := range spec.Columns {
			if got[i] != c.Name {
				t.Fatalf("accepted %q with %v at %d", csv, got[i], i)
			}
		}
		for _, i := range rep.Ignored {
			if s := strings.TrimSpace(got[i].(string)); s != "" && !IsRetired(s) {
				t.Fatalf("accepted a named extra column in %q", csv)
			}
		}
	})
}
