package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/doctor"
)

// A mistyped command is reported as the unknown command, even when flags
// follow it (not as the root's "unknown flag: --dir"), with the commands
// whose names are close and one line naming the help, not the usage.
func TestMistypedCommandIsReportedWithSuggestionsNotItsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts", "--dir", "D"}, `hikoutei: unknown command "stauts" for "hikoutei"; did you mean "status"?` + "\n" +
			"Run 'hikoutei --help' for usage.\n"},
		{[]string{"dcotor"}, `hikoutei: unknown command "dcotor" for "hikoutei"; did you mean "doctor"?` + "\n" +
			"Run 'hikoutei --help' for usage.\n"},
		{[]string{"conflicts", "lsit", "--dir", "D", "--json"}, `hikoutei: unknown command "lsit" for "hikoutei conflicts"; ` +
			`did you mean "list"?` + "\nRun 'hikoutei conflicts --help' for usage.\n"},
		{[]string{"frobnicate", "--dir", "D"}, `hikoutei: unknown command "frobnicate" for "hikoutei"` + "\n" +
			"Run 'hikoutei --help' for usage.\n"},
		{[]string{"status", "--dri", "D"}, "hikoutei: unknown flag: --dri; did you mean --dir?\nRun 'hikoutei status --help' for usage.\n"},
	} {
		code, stdout, stderr := runSplit(tc.args...)
		if code != exitUsage || stdout != "" || stderr != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and:\n%s", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// exampleArgs splits the lines of an Example into command lines (a
// trailing backslash continues a line), each as words (double quotes
// group), up to a shell redirection or pipe.
func exampleArgs(example string) [][]string {
	var out [][]string
	var line string
	for _, l := range strings.Split(example, "\n") {
		line += strings.TrimSpace(l)
		if strings.HasSuffix(line, `\`) {
			line = strings.TrimSuffix(line, `\`) + " "
			continue
		}
		var words []string
		var word strings.Builder
		quoted, inWord := false, false
		for _, r := range line + " " {
			switch {
			case r == '"':
				quoted, inWord = !quoted, true
			case r == ' ' && !quoted:
				if inWord {
					words = append(words, word.String())
				}
				word.Reset()
				inWord = false
			default:
				word.WriteRune(r)
				inWord = true
			}
		}
		for i, w := range words {
			if w == ">" || w == "|" || w == "&" {
				words = words[:i]
				break
			}
		}
		out = append(out, words)
		line = ""
	}
	return out
}

// Every command but the hidden test campaigns shows examples, and every
// example is a command line of the command it documents: its words name
// that command, its flags exist and take what they are given, its
// positional arguments are as many as the command takes.
func TestEveryExampleIsACommandLineOfItsCommand(t *testing.T) {
	for _, path := range commandPaths(newRootCmd(), nil) {
		c := findCommand(t, path)
		if hiddenCommand(c) {
			continue
		}
		lines := exampleArgs(c.Example)
		if len(lines) == 0 {
			t.Errorf("%s has no examples", c.CommandPath())
		}
		for _, words := range lines {
			if len(words) < 1 || words[0] != "hikoutei" {
				t.Errorf("%s: example %q does not run hikoutei", c.CommandPath(), words)
				continue
			}
			root := newRootCmd()
			if _, err := unknownCommand(root, words[1:]); err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), words, err)
				continue
			}
			found, rest, err := root.Find(words[1:])
			if err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), words, err)
				continue
			}
			// a group's examples (the root's included) run its commands
			if found.CommandPath() != c.CommandPath() && !strings.HasPrefix(found.CommandPath(), c.CommandPath()+" ") {
				t.Errorf("%s: example %q runs %s", c.CommandPath(), words, found.CommandPath())
			}
			if err := found.ParseFlags(rest); err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), words, err)
				continue
			}
			if found.Args != nil && !found.HasAvailableSubCommands() {
				if err := found.Args(found, found.Flags().Args()); err != nil {
					t.Errorf("%s: example %q: %v", c.CommandPath(), words, err)
				}
			}
		}
	}
}

// A directory that holds files, none of them a store's, never was a store:
// not_a_store for every command (exit 1). One that holds a store's files
// without its log is a store that lost its log: store_log_missing.
func TestNotAStoreForAFolderThatNeverWasOneLogMissingForAStoreWithoutItsLog(t *testing.T) {
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(foreign, "photos"), 0o700); err != nil {
		t.Fatal(err)
	}
	lost := t.TempDir()
	if err := os.WriteFile(filepath.Join(lost, "read.sqlite"), []byte("projection"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status"}, {"doctor"}, {"audit"}, {"schema"}} {
		code, text := runCLI(t, append(args, "--dir", foreign)...)
		if code != exitFailure || !strings.Contains(text, "not_a_store: "+foreign+" holds notes.txt, photos/ but none of a store's files") ||
			strings.Contains(text, "store_log_missing") || strings.Contains(text, "restore log.db") {
			t.Errorf("%v on a folder of notes: exit %d:\n%s", args, code, text)
		}
		code, text = runCLI(t, append(args, "--dir", lost)...)
		if code != exitFailure || !strings.Contains(text, "store_log_missing") || !strings.Contains(text, "restore log.db from a backup") {
			t.Errorf("%v on a store without its log: exit %d:\n%s", args, code, text)
		}
	}
	if entries, _ := os.ReadDir(foreign); len(entries) != 2 {
		t.Fatalf("the folder changed: %v", entries)
	}
}

// serve on an empty folder (or one that is no store) says what to run:
// serve never creates a store.
func TestServeNotAStoreSaysWhatToRun(t *testing.T) {
	empty := t.TempDir()
	code, stdout, stderr := runSplit("serve", "--dir", empty, "--spreadsheet", testSpreadsheetID)
	for _, want := range []string{"not_a_store: " + empty + " has no log.db", "never creates one", "hikoutei.Open",
		"hikoutei restore --from FILE --to " + empty, "hikoutei demo --keep-open"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("serve on an empty folder: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code != exitFailure || stdout != "" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatalf("serve created %v", entries)
	}
}

// testSpreadsheetID is a well-formed spreadsheet id (never contacted).
const testSpreadsheetID = "1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd"

// Missing or incomplete credentials and a malformed variable are
// configuration errors: serve (and adopt) exit 2, which the systemd unit
// of docs/production.md does not restart, naming the flag and the
// variable, before anything touches the store.
func TestServeConfigurationAndCredentialErrorsExitTwoNamingFlagAndVariable(t *testing.T) {
	dir := storeWithItems(t, 1)
	incomplete := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(incomplete, []byte(`{"type":"service_account"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"no credentials", nil, nil, []string{"credentials_missing", "--credentials", hikoutei.EnvCredentials, "--sheets-endpoint",
			hikoutei.EnvSheetsEndpoint}},
		{"incomplete key by flag", nil, []string{"--credentials", incomplete}, []string{`flag "--credentials"`, "credentials_incomplete"}},
		{"incomplete key by variable", map[string]string{hikoutei.EnvCredentials: incomplete}, nil,
			[]string{"environment: " + hikoutei.EnvCredentials, "credentials_incomplete"}},
		{"malformed interval", map[string]string{"HIKOUTEI_SYNC_POLLING_INTERVAL_MS": "1e3", hikoutei.EnvCredentials: incomplete}, nil,
			[]string{"HIKOUTEI_SYNC_POLLING_INTERVAL_MS", "invalid_polling_interval"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(hikoutei.EnvCredentials, "")
			t.Setenv(hikoutei.EnvSheetsEndpoint, "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			for _, cmd := range [][]string{{"serve"}, {"adopt", "--tab", "T", "--entity", "Item", "--dry-run"}} {
				args := append(append(cmd, "--dir", dir, "--spreadsheet", testSpreadsheetID), tc.args...)
				code, _, stderr := runSplit(args...)
				if code != exitUsage {
					t.Errorf("%v: exit %d, want 2:\n%s", cmd, code, stderr)
				}
				for _, w := range tc.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("%v: stderr lacks %q:\n%s", cmd, w, stderr)
					}
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "lease.toml")); err == nil {
		t.Fatal("a configuration error took the lease")
	}
}

// With --progress (or on a terminal) doctor says on stderr which check
// runs; stdout stays the report (pure JSON with --json). Without it, and
// stderr not a terminal, stderr stays quiet.
func TestDoctorProgressOnStderrOnlyWithProgressOrATerminal(t *testing.T) {
	dir := storeWithItems(t, 20)
	code, stdout, stderr := runSplit("doctor", "--dir", dir, "--json", "--progress")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	for _, step := range []string{"verifying log records", "walking the hash chain", "checking the read model",
		"rebuilding the read model from the log to compare", "checking snapshots"} {
		if !strings.Contains(stderr, "doctor: "+step+" (") {
			t.Errorf("stderr lacks the step %q:\n%s", step, stderr)
		}
	}
	if strings.Contains(stdout, "doctor: ") {
		t.Errorf("progress on stdout:\n%s", stdout)
	}
	if code, _, stderr := runSplit("doctor", "--dir", dir); code != exitOK || stderr != "" {
		t.Errorf("without --progress: exit %d, stderr:\n%s", code, stderr)
	}
}

// A check that counts records says how far it is at most once per
// doctorProgressEvery (by the injected clock); a new check at once.
func TestDoctorProgressLinesAreRateLimited(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	p := newDoctorProgress(&out, func() time.Time { return now })
	p.report(doctor.Progress{Step: "walking the hash chain"})
	for done := uint64(1000); done <= 10000; done += 1000 {
		now = now.Add(500 * time.Millisecond) // 10 chunks over 5 s
		p.report(doctor.Progress{Step: "walking the hash chain", Done: done, Total: 10000})
	}
	p.report(doctor.Progress{Step: "checking the read model"})
	want := "doctor: walking the hash chain (0s elapsed)\n" +
		"doctor: walking the hash chain: 4000 of 10000 records, 40% (2s elapsed)\n" +
		"doctor: walking the hash chain: 8000 of 10000 records, 80% (4s elapsed)\n" +
		"doctor: checking the read model (5s elapsed)\n"
	if out.String() != want {
		t.Fatalf("lines:\n%s\nwant:\n%s", out.String(), want)
	}
}

// A --dir that does not exist is not_a_store saying so (not "is not a
// directory"), with what to give instead.
func TestNotAStoreForADirectoryThatDoesNotExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	for _, args := range [][]string{{"status"}, {"doctor"}} {
		code, text := runCLI(t, append(args, "--dir", missing)...)
		if code != exitFailure || !strings.Contains(text, "not_a_store") || !strings.Contains(text, "does not exist") ||
			strings.Contains(text, "is not a directory") {
			t.Fatalf("%s: exit %d:\n%s", args[0], code, text)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the command created %s: %v", missing, err)
	}
}
