package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// F11: after kill -9 of the process holding a store (lease.toml left,
// the file lock gone with the process), status and poll say that no
// process holds the store, as doctor does — never that a process "did
// not answer" or should be restarted.
func TestF11_StatusAndPollAfterKill9SayNoProcessHoldsTheStore(t *testing.T) {
	dir := storeWithItems(t, 2)
	holder := holdStoreProcess(t, dir)
	if code, out := runCLI(t, "status", "--dir", dir, "--json"); code != exitOK || !strings.Contains(out, `"running":true`) {
		t.Fatalf("status while held: %d %s", code, out)
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()

	code, out := runCLI(t, "status", "--dir", dir)
	if code != exitOK || strings.Contains(out, "did not answer") || strings.Contains(out, "admin_channel_absent") ||
		!strings.Contains(out, "no process holds the store") {
		t.Fatalf("status after kill -9: %d\n%s", code, out)
	}
	code, out = runCLI(t, "status", "--dir", dir, "--json")
	var st storeStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != exitOK {
		t.Fatalf("status --json: %d %v %s", code, err, out)
	}
	if st.Running || st.SyncHealthUnreachable != "" || st.LeaseLeftover == "" || st.Holder != "" {
		t.Fatalf("status --json after kill -9: %+v", st)
	}
	code, out = runCLI(t, "poll", "--dir", dir)
	if code != exitFailure || !strings.Contains(out, "store_not_running") || !strings.Contains(out, "no process holds") ||
		strings.Contains(out, "restart it") || strings.Contains(out, "admin_channel_absent") {
		t.Fatalf("poll after kill -9: %d %s", code, out)
	}
	code, out = runCLI(t, "doctor", "--dir", dir)
	if !strings.Contains(out, "no process has the store open") {
		t.Fatalf("doctor after kill -9: %d %s", code, out)
	}
}

// F11: with the read model's checkpoint past the log head, doctor's
// advice is what Open does: Open refuses (log_behind_read_model), and
// doctor names the same code and the two ways out (salvage --head, or
// --accept-log-gap), never "the next open rebuilds it".
func TestF11_DoctorAdviceForACheckpointPastTheHeadMatchesOpen(t *testing.T) {
	dir := storeWithItems(t, 3)
	head := logHead(t, dir)
	conn, err := sqlite.OpenConn(filepath.Join(dir, hikoutei.ReadModelFile), sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	err = sqlitex.Execute(conn, "UPDATE hk_meta SET value = ? WHERE key = 'checkpoint'", &sqlitex.ExecOptions{Args: []any{head + 2}})
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, itemDef)
	if !errors.Is(err, hikoutei.ErrLogBehindReadModel) {
		t.Fatalf("Open: %v, want log_behind_read_model", err)
	}
	code, out := runCLI(t, "doctor", "--dir", dir, "--json")
	if code == exitOK || !strings.Contains(out, `"code":"log_behind_read_model"`) {
		t.Fatalf("doctor --json: %d %s", code, out)
	}
	_, out = runCLI(t, "doctor", "--dir", dir)
	for _, want := range []string{"salvage --from", "--head", "--accept-log-gap"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's advice lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "next open rebuilds it") {
		t.Errorf("doctor still says the next open rebuilds it:\n%s", out)
	}
}
