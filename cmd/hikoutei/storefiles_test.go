package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRepro3_MissingOrEmptyLogNeverBecomesANewStore: with log.db gone or
// truncated to zero, Open, status and doctor fail with a typed error and
// touch nothing; restoring log.db from a backup brings every item back.
func TestRepro3_MissingOrEmptyLogNeverBecomesANewStore(t *testing.T) {
	t.Parallel()
	for _, damage := range []string{"missing", "empty"} {
		t.Run(damage, func(t *testing.T) {
			dir := storeWithItems(t, 800)
			logPath := filepath.Join(dir, events.LogFileName)
			backup := filepath.Join(t.TempDir(), "log.db.backup")
			copyFile(t, logPath, backup)
			if damage == "missing" {
				os.Remove(logPath)
			} else if err := os.Truncate(logPath, 0); err != nil {
				t.Fatal(err)
			}
			rm := filepath.Join(dir, hikoutei.ReadModelFile)
			before := fileHash(t, rm)
			_, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, itemDef)
			if !errors.Is(err, hikoutei.ErrStoreLogMissing) || !strings.Contains(err.Error(), "restore log.db from a backup") {
				t.Fatalf("open: %v", err)
			}
			for _, cmd := range []string{"status", "doctor"} {
				if code, text := runCLI(t, cmd, "--dir", dir); code == exitOK {
					t.Fatalf("%s exit 0:\n%s", cmd, text)
				}
			}
			if code, text := runCLI(t, "status", "--dir", dir); !strings.Contains(text, "store_log_missing") {
				t.Fatalf("status exit %d:\n%s", code, text)
			}
			if fileHash(t, rm) != before {
				t.Fatal("the read model was touched")
			}
			if st, err := os.Stat(logPath); damage == "missing" && err == nil || damage == "empty" && (err != nil || st.Size() != 0) {
				t.Fatalf("log.db was recreated or changed: %v %v", st, err)
			}
			copyFile(t, backup, logPath)
			if n := countItems(t, dir); n != 800 {
				t.Fatalf("%d of 800 items after restoring the log", n)
			}
		})
	}
}

// TestStatusShowsTheRecordsALogLost: after the store found its read model
// ahead of the log (an older log.db restored), status names the lost
// records until someone deals with them.
func TestStatusShowsTheRecordsALogLost(t *testing.T) {
	dir := storeWithItems(t, 5)
	older := filepath.Join(t.TempDir(), "log.db")
	copyFile(t, filepath.Join(dir, events.LogFileName), older)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	if err := u.Persist(&item{ID: "late", Name: "n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	copyFile(t, older, filepath.Join(dir, events.LogFileName))
	if _, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, itemDef); !errors.Is(err, hikoutei.ErrLogBehindReadModel) {
		t.Fatalf("open of a log behind its read model: %v", err)
	}
	s, err = hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, AcceptLogGap: true}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "LOG LOST RECORDS") || !strings.Contains(out, "read model kept as read.sqlite.ahead-of-log-") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
