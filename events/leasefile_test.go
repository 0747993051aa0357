package events

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const goodLeaseTOML = `schema = 1
operation = "serve"
acquired_at = 2026-11-30T02:05:24.123Z

[holder]
host = "build-7"
pid = 4242
writer_id = "9f3c2a01b2c3d4e5"
`

func TestI22_LeaseFileHasExactlyFourKeys(t *testing.T) {
	dir := t.TempDir()
	want := LeaseFile{Schema: 1, Operation: "demo", AcquiredAt: t0,
		Holder: LeaseHolder{Host: "h", PID: 7, WriterID: "abc"}}
	must(t, WriteLeaseFile(dir, want))
	data, err := os.ReadFile(filepath.Join(dir, LeaseFileName))
	must(t, err)
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		t.Fatal(err)
	}
	holder, _ := raw["holder"].(map[string]any)
	got, err := ParseLeaseFile(data)
	must(t, err)
	if got != want {
		t.Fatalf("round trip: %+v != %+v", got, want)
	}
	if st, _ := os.Stat(filepath.Join(dir, LeaseFileName)); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	if len(raw) != 4 || len(holder) != 3 {
		t.Fatalf("want exactly schema, holder{host,pid,writer_id}, operation, acquired_at:\n%s", data)
	}
}

func TestI22_ParseReportsEveryShapeProblem(t *testing.T) {
	cases := map[string]struct{ doc, want string }{
		"unknown key":   {goodLeaseTOML + "owner = \"x\"\n", `unknown key "holder.owner"`},
		"unknown top":   {"owner = 1\n" + goodLeaseTOML, `unknown key "owner"`},
		"missing key":   {strings.Replace(goodLeaseTOML, "operation = \"serve\"\n", "", 1), `missing key "operation"`},
		"missing inner": {strings.Replace(goodLeaseTOML, "pid = 4242\n", "", 1), `missing key "holder.pid"`},
		"wrong type":    {strings.Replace(goodLeaseTOML, "pid = 4242", "pid = \"4242\"", 1), `key "pid" must be a positive integer`},
		"local time":    {strings.Replace(goodLeaseTOML, "02:05:24.123Z", "02:05:24", 1), `must be an offset date-time`},
		"schema 2":      {strings.Replace(goodLeaseTOML, "schema = 1", "schema = 2", 1), "schema 2 is not 1"},
		"holder string": {strings.Replace(goodLeaseTOML, "[holder]\nhost = \"build-7\"\npid = 4242\nwriter_id = \"9f3c2a01b2c3d4e5\"\n", "holder = \"me\"\n", 1), `"holder" must be a table`},
		"not toml":      {"schema = = 1", "not TOML"},
	}
	for name, c := range cases {
		_, err := ParseLeaseFile([]byte(c.doc))
		var lfe *LeaseFileError
		if !errors.As(err, &lfe) || !errors.Is(err, ErrLeaseFileInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want mention of %s", name, err, c.want)
		}
	}
	if _, err := ParseLeaseFile([]byte(goodLeaseTOML)); err != nil {
		t.Fatalf("good file: %v", err)
	}
}

// FuzzParseLeaseFile: arbitrary bytes never panic; whatever parses
// round-trips through WriteLeaseFile unchanged.
func FuzzParseLeaseFile(f *testing.F) {
	f.Add([]byte(goodLeaseTOML))
	f.Add([]byte("schema = 1\n"))
	f.Add([]byte("[holder]\npid = -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lf, err := ParseLeaseFile(data)
		if err != nil {
			return
		}
		dir := t.TempDir()
		if err := WriteLeaseFile(dir, lf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadLeaseFile(dir)
		if err != nil || !back.AcquiredAt.Equal(lf.AcquiredAt) || back.Holder != lf.Holder || back.Operation != lf.Operation {
			t.Fatalf("round trip %+v -> %+v (%v)", lf, back, err)
		}
	})
}
