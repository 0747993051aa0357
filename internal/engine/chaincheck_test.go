package engine_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// A running store checks what it appends every ChainCheckEvery records
// and moves its chain checkpoint to where the check ended, so the next
// open walks only what was appended since, however long the store ran.
func TestARunningStoreMovesItsChainCheckpointAsItAppends(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	e := engine.Of(s)
	opened, ok, _, err := e.Log().CheckedChainCheckpoint()
	mustT(t, err)
	if !ok {
		t.Fatal("no chain checkpoint after open")
	}
	mustT(t, e.CheckChainEvery(5))
	loadAirports(t, s, 12)
	head, err := e.Log().Head()
	mustT(t, err)
	eventually(t, "the checkpoint to pass the records appended after open", func() bool {
		p, ok, _, err := e.Log().CheckedChainCheckpoint()
		return err == nil && ok && p.Seq > opened.Seq+5 && p.Seq <= head && p.From == opened.Seq
	})
}
