package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// errSecond stops recordSubscription's handler at the second event.
var errSecond = errors.New("second event")

// recordSubscription opens the store in dir and runs a subscription
// "cli" that stops at the second event: its checkpoint is then 1.
func recordSubscription(t *testing.T, dir string) {
	t.Helper()
	s, err := hikoutei.OpenDeclared(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Subscribe(t.Context(), "cli", func(_ context.Context, ev hikoutei.Event) error {
		if ev.Seq == 2 {
			return errSecond
		}
		return nil
	}, hikoutei.CheckpointEvery(1))
	if !errors.Is(err, errSecond) {
		t.Fatalf("subscription: %v", err)
	}
}

// TestSubscriptionsListsCheckpointAndLag: `subscriptions` shows a
// subscription's checkpoint and its lag behind the read model.
func TestSubscriptionsListsCheckpointAndLag(t *testing.T) {
	dir := closedItemStore(t)
	recordSubscription(t, dir)
	code, out, errOut := runSplit("subscriptions", "--dir", dir, "--json")
	var got subscriptionJSON
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got.Name != "cli" || got.Mode != "callback" || got.Checkpoint != 1 || got.Lag == 0 {
		t.Fatalf("got %+v, want cli at checkpoint 1 with a lag", got)
	}
	if code, out, _ := runSplit("subscriptions", "--dir", dir); code != exitOK || out == "" {
		t.Fatalf("table: exit %d %q", code, out)
	}
}

// F9: a subscription checkpoint past the log head, or negative, is
// reported — by subscriptions (INVALID with the code, exit 1; never a
// wrapped negative such as 18446744073709551609, never lag 0 as if it were
// current) and by doctor (subscription_checkpoint_invalid).
func TestF9_SubscriptionsAndDoctorReportACheckpointPastTheHead(t *testing.T) {
	t.Parallel()
	dir := closedItemStore(t)
	recordSubscription(t, dir)
	for _, bad := range []int64{5000, -7} {
		conn, err := sqlite.OpenConn(filepath.Join(dir, hikoutei.ReadModelFile), sqlite.OpenReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		err = sqlitex.Execute(conn, "UPDATE hk_subscriptions SET checkpoint = ?", &sqlitex.ExecOptions{Args: []any{bad}})
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runSplit("subscriptions", "--dir", dir, "--json")
		var got subscriptionJSON
		if code != exitFailure || json.Unmarshal([]byte(out), &got) != nil || got.Checkpoint != bad || got.Lag != 0 ||
			!strings.HasPrefix(got.Error, "subscription_checkpoint_invalid") {
			t.Fatalf("checkpoint %d: exit %d %s%s", bad, code, out, errOut)
		}
		code, out, _ = runSplit("subscriptions", "--dir", dir)
		if code != exitFailure || !strings.Contains(out, "INVALID: subscription_checkpoint_invalid") || strings.Contains(out, "18446744073709") {
			t.Fatalf("checkpoint %d: table exit %d %s", bad, code, out)
		}
		code, out, _ = runSplit("doctor", "--dir", dir, "--json")
		if code == exitOK || !strings.Contains(out, `"code":"subscription_checkpoint_invalid"`) {
			t.Fatalf("checkpoint %d: doctor exit %d %s", bad, code, out)
		}
	}
}
