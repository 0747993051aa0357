package projector_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// openBuilding opens a new read model with Options.Build.
func openBuilding(t *testing.T) *projector.Projector {
	t.Helper()
	path := filepath.Join(t.TempDir(), projector.FileName)
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: []events.EntityShape{airportShape(), runwayShape()}, Build: true})
	must(t, err)
	return p
}

// TestBuildBatchesShareATransaction: a building read model's batches
// join one open transaction until it holds the build's transaction size
// of events, then it commits.
func TestBuildBatchesShareATransaction(t *testing.T) {
	batches := bulkHistory()
	defer projector.SetBuildTxEvents(len(batches[0]) + len(batches[1]))()
	p := openBuilding(t)
	defer p.Close()
	must(t, p.Apply(batches[0]))
	if p.Conn().AutocommitEnabled() {
		t.Fatal("the first batch committed: its transaction is not open for the next one")
	}
	must(t, p.Apply(batches[1]))
	if !p.Conn().AutocommitEnabled() {
		t.Fatal("the transaction holds the build's size of events but did not commit")
	}
}

// TestBuildEqualsLiveAcrossCommits: a build that commits in the middle of
// its batches (a small transaction size, batches of 40 events) dumps as
// the per-event path does.
func TestBuildEqualsLiveAcrossCommits(t *testing.T) {
	defer projector.SetBuildTxEvents(100)()
	var all []events.Event
	for _, b := range bulkHistory() {
		all = append(all, b...)
	}
	var batches [][]events.Event
	for i := 0; i < len(all); i += 40 {
		batches = append(batches, all[i:min(i+40, len(all))])
	}
	if built, live := buildOf(t, batches), liveOf(t, batches); !bytes.Equal(built, live) {
		t.Fatalf("built:\n%s\nlive:\n%s", built, live)
	}
}

// TestBuildFailedBatchBackToLastCommit: a batch that fails on a building
// read model reports ErrProjection and leaves the checkpoint at the last
// commit's, not at the batch before it (which was in the transaction the
// failure rolled back).
func TestBuildFailedBatchBackToLastCommit(t *testing.T) {
	batches := bulkHistory()
	defer projector.SetBuildTxEvents(len(batches[0]))()
	p := openBuilding(t)
	defer p.Close()
	must(t, p.Apply(batches[0])) // committed
	committed := p.Checkpoint()
	must(t, p.Apply(batches[1][:10])) // in the open transaction
	bad := []events.Event{newHistory().removed("Airport", "")}
	bad[0].Seq = p.Checkpoint() + 1
	if err := p.Apply(bad); !errors.Is(err, projector.ErrProjection) {
		t.Fatalf("Apply of a malformed event = %v, want ErrProjection", err)
	}
	if got := p.Checkpoint(); got != committed {
		t.Fatalf("checkpoint after the failure = %d, want the last commit's %d", got, committed)
	}
}
