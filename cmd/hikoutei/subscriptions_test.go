package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

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
