package hikoutei

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestHealthReportsTheReadModelsTheStoreSetAside: a store that found its
// read model unusable sets it aside and rebuilds; its health then says
// so, with the code, how many, their bytes and the oldest's time, where
// the same store before reported nothing.
func TestHealthReportsTheReadModelsTheStoreSetAside(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	a := readAirports(t)[0]
	commit(t, s, &a)
	if h := s.Health(); h.SetAside != nil || h.DiskUsage == nil || h.DiskUsage.SetAsideCopies != 0 {
		t.Fatalf("a store with nothing set aside: SetAside = %v, usage %+v", h.SetAside, h.DiskUsage)
	}
	mustT(t, s.Close())
	mustT(t, removeReadModel(filepath.Join(dir, ReadModelFile)))
	mustT(t, os.WriteFile(filepath.Join(dir, ReadModelFile), []byte("not a read model, 40 bytes long........."), 0o600))

	s = openStore(t, dir)
	defer s.Close()
	h := s.Health()
	if !errors.Is(h.SetAside, ErrReadModelSetAside) || ErrorCode(h.SetAside) != "read_model_set_aside" {
		t.Fatalf("SetAside = %v; want read_model_set_aside", h.SetAside)
	}
	u := h.DiskUsage
	if u == nil || u.SetAsideCopies != 1 || u.SetAsideBytes != 40 || u.SetAsideOldest.IsZero() {
		t.Fatalf("usage = %+v; want one copy of 40 bytes with its time", u)
	}
	if h.Local != nil {
		t.Fatalf("Local = %v: a set-aside copy is a notice, the store commits", h.Local)
	}
}
