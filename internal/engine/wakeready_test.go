package engine_test

import (
	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/wakehook"
)

// A warm standby's pollers do not run: a wake it would answer 202 to
// polls nothing, so WakeReady says wake_standby. Once it took over and
// its poller runs, nothing refuses (without sync: sync_not_configured).
func TestWakeReadyRefusesOnAStandby(t *testing.T) {
	x := newReplicated(t)
	primary := x.mustOpen(t.TempDir(), false)
	standby := x.mustOpen(t.TempDir(), true)
	n := engine.Of(standby).WakeReady()
	if n == nil || !errors.Is(n, wakehook.ErrStandby) || n.Reason != "standby" {
		t.Fatalf("WakeReady on a standby = %v, want wake_standby: standby", n)
	}
	if n := engine.Of(primary).WakeReady(); n == nil || !errors.Is(n, wakehook.ErrSyncNotRunning) || n.Reason != "sync_not_configured" {
		t.Fatalf("WakeReady on a primary without sync = %v, want wake_sync_not_running: sync_not_configured", n)
	}
}
