package converge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// TestPlaintextScanFindsValuesOutsideTheKeyFile: the search reports a
// file holding a personal value (an erased subject's named as such) and
// skips the key file.
func TestPlaintextScanFindsValuesOutsideTheKeyFile(t *testing.T) {
	w := newWorkload(1)
	live, gone := w.pii.newValue("p1", 1), w.pii.newValue("p2", 1)
	w.pii.erased["p2"] = true
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(keyring.File, gone+live)
	write("log.db", "x"+gone+"x")
	write("sub/read.sqlite", "hk1e:sealed "+live)
	write("clean", "hk1e:sealed")
	files, err := scanPlaintext(dir, &w.pii)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || !strings.Contains(strings.Join(files, "\n"), "log.db holds a plaintext personal value (of erased subject p2)") {
		t.Fatalf("found %q", files)
	}
}

// TestSheetPersonalCellsAreTheValueOrTheMarker: the System tab's email
// cell must be the value last acknowledged, or the marker once the
// subject was erased; an erased value anywhere on a tab is reported.
func TestSheetPersonalCellsAreTheValueOrTheMarker(t *testing.T) {
	w := newWorkload(1)
	p1 := &Part{ID: "p1", Email: w.pii.newValue("p1", 1)}
	p2 := &Part{ID: "p2", Email: w.pii.newValue("p2", 1)}
	w.note(p1, false)
	w.note(p2, false)
	w.pii.erased["p2"] = true
	header := []string{layout.AnchorHeader, "id", "email"}
	good := map[string][][]string{systemTab: {header, {"p1", "p1", p1.Email}, {"p2", "p2", hikoutei.Erased}}}
	if d := w.sheetDiffs(good); len(d) != 0 {
		t.Fatalf("clean sheet reported: %q", d)
	}
	bad := map[string][][]string{systemTab: {header, {"p1", "p1", hikoutei.Erased}, {"p2", "p2", p2.Email}}, inputTab: {{p2.Email}}}
	if d := w.sheetDiffs(bad); len(d) != 4 {
		t.Fatalf("want 4 differences (two cells, two erased values shown), got %q", d)
	}
}
