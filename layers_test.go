package hikoutei_test

import (
	"os/exec"
	"strings"
	"testing"
)

// goList runs `go list` with args and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test lists packages with the go command, which is not on PATH: %v", err)
	}
	out, err := exec.Command(goBin, append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

const module = "github.com/hikoutei/hikoutei-go"

// The hikoutei binary users install links the demo but no campaign: the
// campaigns are the hikoutei-lab command's.
func TestProductBinaryLinksNoCampaign(t *testing.T) {
	deps := goList(t, "-deps", "./cmd/hikoutei")
	demo := false
	for _, dep := range deps {
		if strings.HasPrefix(dep, module+"/internal/above/lab") {
			t.Errorf("the hikoutei binary links %s", dep)
		}
		demo = demo || dep == module+"/internal/above/demo"
	}
	if !demo {
		t.Errorf("the hikoutei binary does not link the demo (%d packages listed)", len(deps))
	}
}

// internal/ shows its two layers: what drives the public API from above
// (internal/above: the demo and the campaigns in internal/above/lab) is
// imported only by the commands and by itself; nothing below imports it.
func TestInternalLayersPointOneWay(t *testing.T) {
	lines := goList(t, "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	if len(lines) < 20 {
		t.Fatalf("go list listed only %d packages", len(lines))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		pkg, imports := f[0], f[1:]
		if strings.HasPrefix(pkg, module+"/internal/above/") || strings.HasPrefix(pkg, module+"/cmd/") {
			continue
		}
		for _, im := range imports {
			if strings.HasPrefix(im, module+"/internal/above/") {
				t.Errorf("%s imports %s, which drives the public API from above", pkg, im)
			}
		}
	}
	for _, line := range goList(t, "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./cmd/hikoutei") {
		if strings.Contains(line, module+"/internal/above/lab") {
			t.Errorf("cmd/hikoutei imports a campaign: %s", line)
		}
	}
}
