package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/observe"
)

// runSplit runs the CLI in process and returns stdout and stderr apart.
func runSplit(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// commandPaths lists every command of the tree, root included, as the
// arguments that name it.
func commandPaths(c *cobra.Command, path []string) [][]string {
	out := [][]string{path}
	for _, sub := range c.Commands() {
		if sub.Name() == "help" || sub.Name() == "completion" {
			continue
		}
		out = append(out, commandPaths(sub, append(slices.Clone(path), sub.Name()))...)
	}
	return out
}

func findCommand(t *testing.T, path []string) *cobra.Command {
	t.Helper()
	c, _, err := newRootCmd().Find(path)
	if err != nil {
		t.Fatalf("%v: %v", path, err)
	}
	return c
}

// invariantID matches the ids of the design documents (I12, C06), which
// mean nothing to a user.
var invariantID = regexp.MustCompile(`\b[IC][0-9]{2}\b`)

// wantUsage fails unless a run exited 2 and named the help of c in one
// line, without dumping its usage.
func wantUsage(t *testing.T, c *cobra.Command, args []string) {
	t.Helper()
	code, _, stderr := runSplit(args...)
	hint := "\nRun '" + c.CommandPath() + " --help' for usage.\n"
	if code != exitUsage || !strings.HasSuffix(stderr, hint) || strings.Contains(stderr, "Usage:") || strings.Count(stderr, "\n") != 2 {
		t.Errorf("%v: exit %d, want %d, the error and %q; stderr:\n%s", args, code, exitUsage, hint, stderr)
	}
}

// TestCLIConsistencyEveryCommandHasHelpUsageErrorsAndEnumChecks walks the
// whole command tree: --help exits 0 with the command's usage, examples
// (but for the hidden test campaigns) and no invariant id; an unknown
// flag exits 2 with one line naming that command's help on stderr; every
// enum flag refuses a value outside its set the same way.
func TestCLIConsistencyEveryCommandHasHelpUsageErrorsAndEnumChecks(t *testing.T) {
	for _, path := range commandPaths(newRootCmd(), nil) {
		c := findCommand(t, path)
		name := strings.Join(append([]string{"hikoutei"}, path...), " ")
		code, stdout, _ := runSplit(append(slices.Clone(path), "--help")...)
		if code != exitOK || !strings.Contains(stdout, c.UseLine()) {
			t.Errorf("%s --help: exit %d, want 0 with its usage:\n%s", name, code, stdout)
		}
		if !hiddenCommand(c) && (c.Example == "" || !strings.Contains(stdout, "\nExamples:\n  hikoutei ")) {
			t.Errorf("%s --help shows no examples:\n%s", name, stdout)
		}
		if id := invariantID.FindString(stdout); id != "" {
			t.Errorf("%s --help shows the invariant id %s", name, id)
		}
		wantUsage(t, c, append(slices.Clone(path), "--no-such-flag"))
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if _, ok := f.Value.(interface{ Allowed() []string }); ok {
				wantUsage(t, c, append(slices.Clone(path), "--"+f.Name, "no-such-value"))
			}
		})
	}
}

// hiddenCommand reports whether c or a parent is hidden (the test
// campaigns).
func hiddenCommand(c *cobra.Command) bool {
	for ; c != nil; c = c.Parent() {
		if c.Hidden {
			return true
		}
	}
	return false
}

// jsonSpec is one row of docs/cli.md's "JSON output" table.
type jsonSpec struct {
	shape    jsonShape
	required []string
	optional []string
}

// readJSONSpecs parses docs/cli.md's "JSON output" table: command → shape and
// fields ("the fields of `X`" refers to another row).
func readJSONSpecs(t *testing.T) map[string]jsonSpec {
	t.Helper()
	page, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "\n## JSON output\n")
	if !ok {
		t.Fatal(`docs/cli.md has no "## JSON output" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z ]+)` \\| (object|lines) \\| (.+) \\|$")
	field := regexp.MustCompile("`([a-z0-9_]+)`(\\?)?")
	ref := regexp.MustCompile("^the fields of `([a-z ]+)`$")
	specs := map[string]jsonSpec{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		spec := jsonSpec{shape: jsonShape(m[2])}
		if r := ref.FindStringSubmatch(m[3]); r != nil {
			base, ok := specs[r[1]]
			if !ok {
				t.Fatalf("docs/cli.md: %s refers to %s, not above it", m[1], r[1])
			}
			spec.required, spec.optional = base.required, base.optional
		}
		for _, f := range field.FindAllStringSubmatch(m[3], -1) {
			if ref.MatchString(m[3]) {
				break
			}
			if f[2] == "?" {
				spec.optional = append(spec.optional, f[1])
			} else {
				spec.required = append(spec.required, f[1])
			}
		}
		specs[m[1]] = spec
	}
	return specs
}

// checkShape fails unless out is JSON lines of objects in spec's shape,
// with every required field and no undocumented one.
func checkShape(t *testing.T, name string, spec jsonSpec, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if out == "" || spec.shape == shapeObject && len(lines) != 1 {
		t.Errorf("%s --json: %d lines, want %s:\n%s", name, len(lines), map[jsonShape]string{shapeObject: "exactly one", shapeLines: "at least one (the scenario has entries)"}[spec.shape], out)
		return
	}
	for _, line := range lines {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Errorf("%s --json: %v in %q", name, err, line)
			continue
		}
		for _, k := range spec.required {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s --json: no %q in %s", name, k, line)
			}
		}
		for k := range obj {
			if !slices.Contains(spec.required, k) && !slices.Contains(spec.optional, k) {
				t.Errorf("%s --json: %q is not in docs/cli.md's JSON output table", name, k)
			}
		}
	}
}

// withoutJSON are the commands that print no data (docs/cli.md says why).
var withoutJSON = []string{"serve", "fake-sheets", "demo",
	"conflicts", "outbox", "quarantine", ""}

// jsonScenario is a store to run the --json commands on: a closed store
// with an open conflict and an active quarantine record, synced through
// the emulator over HTTP, plus a second one to resolve a conflict in.
type jsonScenario struct {
	dir, other, tmp       string
	conflict, quarantined string
	otherConflict         string
	effect                string
	fence                 []string
	natsURL               string
	sheet                 *hikouteitest.Sheet
}

func newJSONScenario(t *testing.T) *jsonScenario {
	t.Helper()
	sc := &jsonScenario{dir: t.TempDir(), other: t.TempDir(), tmp: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	sc.conflict, sc.quarantined = conflictAndQuarantine(t, sc.dir, sc.sheet)
	writeStocksTab(t, sc.sheet)
	sc.otherConflict, _ = conflictAndQuarantine(t, sc.other, hikouteitest.NewSheet(t))
	code, out, errOut := runSplit("conflicts", "list", "--json", "--dir", sc.dir)
	var c conflictRow
	if err := json.Unmarshal([]byte(out), &c); code != exitOK || err != nil {
		t.Fatalf("conflicts list: exit %d %v\n%s%s", code, err, out, errOut)
	}
	sc.fence = []string{c.ID, jsonNumber(c.CanonicalRevision), c.CandidateHash, jsonNumber(c.CandidateEpoch)}
	code, out, errOut = runSplit("outbox", "list", "--json", "--limit", "1", "--dir", sc.dir)
	var e outboxEntryJSON
	if err := json.Unmarshal([]byte(out), &e); code != exitOK || err != nil {
		t.Fatalf("outbox list: exit %d %v\n%s%s", code, err, out, errOut)
	}
	sc.effect = e.ID
	sc.natsURL = startNATS(t)
	recordSubscription(t, sc.dir)
	writeShapesWithAField(t, sc.dir, filepath.Join(sc.tmp, "shapes.json"))
	return sc
}

// writeShapesWithAField writes to path the shapes `schema --json` prints
// for dir, with a field added to the first entity: a compatible change.
func writeShapesWithAField(t *testing.T, dir, path string) {
	t.Helper()
	code, out, errOut := runSplit("schema", "--json", "--dir", dir)
	var s schemaJSON
	if err := json.Unmarshal([]byte(out), &s); code != exitOK || err != nil || len(s.Entities) == 0 {
		t.Fatalf("schema --json: exit %d %v\n%s%s", code, err, out, errOut)
	}
	s.History = nil
	s.Entities[0].Fields = append(s.Entities[0].Fields, fieldJSON{Name: "added", Kind: "float", Owner: "system"})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// startNATS runs a plain NATS server on loopback for poll to publish to.
func startNATS(t *testing.T) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	return srv.ClientURL()
}

// args are the arguments each --json command runs with, in the order
// they run (the later ones change the stores).
func (sc *jsonScenario) args() [][]string {
	backup := filepath.Join(sc.tmp, "backup.db")
	return [][]string{
		{"version"},
		{"status", "--dir", sc.dir},
		{"doctor", "--dir", sc.dir},
		{"audit", "--dir", sc.dir, "--entity", "Stock"},
		{"audit", "verify", "--dir", sc.dir},
		{"replay", "--dir", sc.dir, "--out", filepath.Join(sc.tmp, "replayed.sqlite")},
		{"poll", "--store", "consistency", "--nats", sc.natsURL},
		{"conflicts", "list", "--dir", sc.dir, "--state", "all"},
		{"conflicts", "show", "--dir", sc.dir, sc.conflict},
		{"outbox", "list", "--dir", sc.dir, "--limit", "0"},
		{"outbox", "show", "--dir", sc.dir, sc.effect},
		{"quarantine", "list", "--dir", sc.dir, "--all"},
		{"quarantine", "show", "--dir", sc.dir, sc.quarantined},
		{"backup", "--dir", sc.dir, "--out", backup},
		{"restore", "--from", backup, "--to", filepath.Join(sc.tmp, "restored")},
		{"salvage", "--from", sc.dir, "--to", filepath.Join(sc.tmp, "salvaged")},
		{"ping", "--dir", sc.dir},
		{"subscriptions", "--dir", sc.dir},
		{"schema", "--dir", sc.dir},
		{"migrate", "--dir", sc.dir, "--dry-run", "--shapes", filepath.Join(sc.tmp, "shapes.json")},
		adoptArgs(sc.dir, sc.sheet, "--dry-run"),
		append([]string{"conflicts", "ack", "--dir", sc.dir}, sc.fence...),
		{"conflicts", "resolve", "--dir", sc.other, sc.otherConflict, "--keep-system"},
		{"quarantine", "dismiss", "--dir", sc.dir, sc.quarantined},
		{"seal", "--dir", sc.other, "--keep", "3", "--min-batch", "1"},
		{"erase", "--dir", sc.other, "--subject", "S1"},
		{"compact", "--dir", sc.other},
		{"setaside", "--dir", sc.other, "--older-than", "720h", "--delete"},
	}
}

// TestCLIConsistencyJSONOutputMatchesTheDocs runs every command that
// has --json on a real store (and a NATS server for poll) and checks its
// output against docs/cli.md's table; every command without --json is one
// docs/cli.md says prints no data; `ping` runs while the store is open.
func TestCLIConsistencyJSONOutputMatchesTheDocs(t *testing.T) {
	specs := readJSONSpecs(t)
	sc := newJSONScenario(t)
	tested := map[string]bool{}
	for _, args := range sc.args() {
		c := findCommand(t, args)
		name := strings.TrimPrefix(c.CommandPath(), "hikoutei ")
		spec, ok := specs[name]
		if !ok || string(spec.shape) != c.Annotations[annotationJSON] {
			t.Errorf("%s: docs/cli.md says %q, the command prints %q", name, spec.shape, c.Annotations[annotationJSON])
			continue
		}
		var closeStore func()
		if name == "ping" {
			closeStore = holdStore(t, sc.dir)
		}
		code, out, errOut := runSplit(append(args, "--json")...)
		if closeStore != nil {
			closeStore()
		}
		if code != exitOK {
			t.Errorf("%v --json: exit %d\n%s%s", args, code, out, errOut)
			continue
		}
		checkShape(t, name, spec, out)
		tested[name] = true
	}
	for _, path := range commandPaths(newRootCmd(), nil) {
		c := findCommand(t, path)
		name := strings.Join(path, " ")
		switch hasJSON := c.Flags().Lookup("json") != nil; {
		case hasJSON && !tested[name]:
			t.Errorf("%s has --json but no scenario runs it", name)
		case !hasJSON && !slices.Contains(withoutJSON, name):
			t.Errorf("%s has no --json and is not one of the commands that print no data", name)
		}
	}
}

// holdStore opens the store in this process (it serves the
// administrative channel) and returns its close.
func holdStore(t *testing.T, dir string) func() {
	t.Helper()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, hikoutei.Entity[stock]("Stock"))
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestCLIConsistencyStoreErrorsAndFlagChecks: a --dir that is not a store
// is not_a_store for every command that takes one; audit refuses an
// entity the log never declared; serve blames its flags, not the
// variables they override, and checks --http before the lease.
func TestCLIConsistencyStoreErrorsAndFlagChecks(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	positional := map[string][]string{"conflicts show": {"x"}, "conflicts ack": {"x", "1", "h", "0"}, "conflicts resolve": {"x", "--keep-system"},
		"outbox show": {"x"}, "quarantine show": {"x"}, "quarantine dismiss": {"x"}, "backup": {"--out", filepath.Join(t.TempDir(), "b")},
		"migrate": {"--dry-run", "--shapes", "x"},
		"adopt":   {"--spreadsheet", "1AdoptTestSheetId", "--sheets-endpoint", "http://127.0.0.1:1", "--tab", "T", "--entity", "E"}}
	for _, path := range commandPaths(newRootCmd(), nil) {
		c := findCommand(t, path)
		name := strings.Join(path, " ")
		if c.Flags().Lookup("dir") == nil || slices.Contains([]string{"demo", "serve"}, name) {
			continue
		}
		args := append(append(slices.Clone(path), "--dir", missing), positional[name]...)
		if code, out, errOut := runSplit(args...); code != exitFailure || !strings.Contains(errOut, "not_a_store") {
			t.Errorf("%v: exit %d, want 1 with not_a_store:\n%s%s", args, code, out, errOut)
		}
	}
	dir := closedItemStore(t)
	audit := findCommand(t, []string{"audit"})
	wantUsage(t, audit, []string{"audit", "--dir", dir, "--entity", "Nope"})
	serve := findCommand(t, []string{"serve"})
	for flag, value := range map[string]string{"--spreadsheet": "not an id", "--http": "127.0.0.1:notaport", "--sheets-endpoint": "ftp://x",
		"--nats-listen": "nohostport"} {
		args := []string{"serve", "--dir", dir, "--sheets-endpoint", "http://127.0.0.1:1", "--spreadsheet", "1ServeTestSheetId", flag, value}
		_, _, errOut := runSplit(args...)
		wantUsage(t, serve, args)
		if first, _, _ := strings.Cut(errOut, "\n"); !strings.Contains(first, `flag "`+flag+`"`) || strings.Contains(first, "HIKOUTEI_") {
			t.Errorf("%v: stderr does not blame the flag:\n%s", args, first)
		}
	}
	t.Setenv(hikoutei.EnvSpreadsheetURL, "not an id")
	args := []string{"serve", "--dir", dir, "--sheets-endpoint", "http://127.0.0.1:1"}
	wantUsage(t, serve, args)
	if _, _, errOut := runSplit(args...); !strings.HasPrefix(errOut, "hikoutei: environment: "+hikoutei.EnvSpreadsheetURL+": ") {
		t.Errorf("a malformed %s without --spreadsheet is not blamed on it:\n%s", hikoutei.EnvSpreadsheetURL, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "lease.toml")); !os.IsNotExist(err) {
		t.Fatalf("a refused serve left lease.toml: %v", err)
	}
}

// TestVersionNamesTheBuild: --version and version print a version, never
// a bare "(devel)", and the same one hikoutei_build_info carries in its
// version label (one source: observe.ReadBuildInfo).
func TestVersionNamesTheBuild(t *testing.T) {
	code, short, _ := runSplit("--version")
	if code != exitOK || !strings.HasPrefix(short, "hikoutei ") || strings.Contains(short, "(devel)") {
		t.Fatalf("--version: exit %d %q", code, short)
	}
	code, out, _ := runSplit("version", "--json")
	var v versionInfo
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("version --json: exit %d %s", code, out)
	}
	if !strings.HasPrefix(short, "hikoutei "+v.Version+" ") && short != "hikoutei "+v.Version+"\n" {
		t.Errorf("--version %q and version --json %q disagree", short, v.Version)
	}
	if label := buildInfoVersion(t); label != v.Version {
		t.Errorf("hikoutei_build_info{version=%q}, hikoutei version says %q", label, v.Version)
	}
}

// buildInfoVersion is the version label of hikoutei_build_info as serve's
// /metrics exports it.
func buildInfoVersion(t *testing.T) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(observe.New())
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "hikoutei_build_info" {
			continue
		}
		for _, l := range f.GetMetric()[0].GetLabel() {
			if l.GetName() == "version" {
				return l.GetValue()
			}
		}
	}
	t.Fatal("no hikoutei_build_info")
	return ""
}
