package operator

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A refusal is typed when its message leads with a stable code (or it is
// a usage error, exit 2); anything else is counted as untyped.
func TestTypedRefusals(t *testing.T) {
	for stderr, want := range map[string]bool{
		"hikoutei: backup_target_invalid: target_inside_store: x is inside y\n": true,
		"hikoutei: store_locked (held by …)\n":                                  true,
		"hikoutei: not_a_store\n":                                               true,
		"hikoutei: restore target: open x: no such file\n":                      false,
		"hikoutei: open log log.db: permission denied\n":                        false,
		"": false,
	} {
		if got := typed(1, stderr); got != want {
			t.Errorf("typed(%q) = %v, want %v", stderr, got, want)
		}
	}
	if !typed(2, "hikoutei: unknown flag --x\n") {
		t.Error("a usage error is typed by its exit code")
	}
}

// foreign names what no store writes into its directory.
func TestForeignEntriesOfAStoreDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	for _, name := range []string{"log.db", "read.sqlite", "read.sqlite-wal", "lease.toml", "admin.sock", "x.db", ".x.db.tmp-1",
		"read.sqlite.before-rebuild-20261201T000000.000000000Z", "hikoutei-run-1-2"} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := foreign(dir)
	want := []string{"s/.x.db.tmp-1", "s/hikoutei-run-1-2", "s/x.db"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("foreign = %v, want %v", got, want)
	}
}
