package replaytest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/projector"
)

// update rewrites the golden dumps from the committed logs:
//
//	go test ./replay_test/ -run TestGolden -update
var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the committed logs")

// Airport is the entity the recorded logs hold. Its shape is part of the
// recorded data: changing a field changes every golden dump (and the
// schema_v1 log's payloads name these fields), so regenerate both together.
type Airport struct {
	ID       string     `hikoutei:"id,pk"`
	Name     string     `hikoutei:"name"`
	City     string     `hikoutei:"city"`
	Country  string     `hikoutei:"country"`
	IATA     string     `hikoutei:"iata"`
	Lat      float64    `hikoutei:"latitude"`
	Lng      float64    `hikoutei:"longitude"`
	Altitude int64      `hikoutei:"altitude"`
	TZ       string     `hikoutei:"tz"`
	Notes    string     `hikoutei:"notes,user"`
	Checked  *time.Time `hikoutei:"checked"`
	Active   bool       `hikoutei:"active"`
}

func airportDef() hikoutei.EntityDef { return hikoutei.Entity[Airport]("Airport") }

// recordedLogs are the committed logs under testdata/logs/<name>/log.db.
var recordedLogs = []string{"airports", "schema_v1"}

func logDir(name string) string { return filepath.Join("testdata", "logs", name) }

func goldenPath(name string) string { return filepath.Join("testdata", "golden", name+".txt") }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// replayed replays the store directory dir into a fresh read model in a
// temp dir and returns its path and the checkpoint reached.
func replayed(t testing.TB, dir string) (string, uint64) {
	t.Helper()
	target := filepath.Join(t.TempDir(), hikoutei.ReadModelFile)
	cp, err := hikoutei.Replay(dir, target, hikoutei.ReplayOptions{}, airportDef())
	must(t, err)
	return target, cp
}

func dump(t testing.TB, readModel string) []byte {
	t.Helper()
	var b bytes.Buffer
	must(t, projector.Dump(readModel, &b))
	return b.Bytes()
}

func digest(t testing.TB, readModel string) string {
	t.Helper()
	d, err := projector.Digest(readModel)
	must(t, err)
	return d
}

// copyStore copies a committed log into a fresh store directory, so a test
// may open it for writing or damage it without touching testdata.
func copyStore(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(logDir(name), "log.db"))
	must(t, err)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "log.db"), data, 0o600))
	return dir
}

// compareGolden compares got (without its empty tables) with the golden
// file, or rewrites it under -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	got = withoutEmptyTables(got)
	if *update {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("dump differs from %s (run with -update if the change is intended):\n%s", path, lineDiff(want, got))
	}
}

// lineDiff lists the lines only in want (-) or only in got (+), in order,
// at most 40 of them: enough to see what changed without a diff library.
func lineDiff(want, got []byte) string {
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	inW, inG := map[string]int{}, map[string]int{}
	for _, l := range w {
		inW[string(l)]++
	}
	for _, l := range g {
		inG[string(l)]++
	}
	var out bytes.Buffer
	n := 0
	for _, l := range w {
		if inG[string(l)] == 0 && n < 40 {
			out.WriteString("- " + string(l) + "\n")
			n++
		}
	}
	for _, l := range g {
		if inW[string(l)] == 0 && n < 40 {
			out.WriteString("+ " + string(l) + "\n")
			n++
		}
	}
	return out.String()
}

// withoutEmptyTables drops the sections of tables that have no rows from
// a Dump. The goldens pin what a history puts into the read model; the
// column lists of tables it leaves empty (hk_outbox, hk_conflicts, … owned
// by other projections and still growing) are not part of that, so their
// migrations do not churn these goldens. Tables with rows keep their
// header, and a table that gains rows shows up in the diff.
func withoutEmptyTables(dump []byte) []byte {
	lines := strings.SplitAfter(string(dump), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "== ") &&
			(i+2 >= len(lines) || strings.HasPrefix(lines[i+2], "== ") || lines[i+2] == "") {
			i++ // skip the section title and its column header
			continue
		}
		out.WriteString(lines[i])
	}
	return []byte(out.String())
}

func TestWithoutEmptyTablesDropsOnlyEmptySections(t *testing.T) {
	in := "== a\n   x | y\n== b\n   x\n   i:1\n== c\n   z\n"
	if got := string(withoutEmptyTables([]byte(in))); got != "== b\n   x\n   i:1\n" {
		t.Fatalf("got %q", got)
	}
}
