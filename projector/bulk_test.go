package projector_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// TestBulkLoadEndsAsTheSameWALReadModel: a read model loaded in bulk
// (no journal, no syncs) is, once closed, a WAL read model whose dump
// equals the one the same batches give through the normal path, and it
// reopens normally at the same checkpoint.
func TestBulkLoadEndsAsTheSameWALReadModel(t *testing.T) {
	batches := func() [][]events.Event {
		h := newHistory()
		return [][]events.Event{
			{h.created("Airport", "A", goroka(), 1), h.created("Airport", "B", map[string]any{"name": "x"}, 1)},
			{h.persisted("Airport", "B", false, map[string]any{"altitude": int64(3)}, map[string]uint64{"altitude": 1}), h.removed("Airport", "A")},
		}
	}
	dir := t.TempDir()
	normal, bulkPath := filepath.Join(dir, "normal.sqlite"), filepath.Join(dir, "bulk.sqlite")
	pn := openAt(t, normal)
	pb, err := projector.Open(bulkPath, projector.Options{StoreID: storeID, Entities: testEntities(), Bulk: true})
	must(t, err)
	for i, b := range batches() {
		must(t, pn.Apply(b))
		must(t, pb.Apply(batches()[i]))
	}
	must(t, pn.Close())
	must(t, pb.Close())
	wantRows(t, "journal mode", query(t, bulkPath, "PRAGMA journal_mode"), "wal")
	if got, want := dump(t, bulkPath), dump(t, normal); !bytes.Equal(got, want) {
		t.Errorf("bulk dump differs:\n%s\n--- normal\n%s", got, want)
	}
	p := openAt(t, bulkPath)
	defer p.Close()
	if p.Checkpoint() != 4 {
		t.Errorf("checkpoint %d, want 4", p.Checkpoint())
	}
}
