package hikoutei

import (
	"errors"
	"github.com/hikoutei/hikoutei-go/events"
	"path/filepath"
	"testing"
)

func TestLogRecordsEntityShapesAndToolsOpenWithoutGoTypes(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 30)
	live := digest(t, s.ReadModelPath())
	n := s.Checkpoint()
	mustT(t, s.Close())
	s = openStore(t, dir) // same shapes: nothing new is recorded
	mustT(t, s.Close())
	var declared int
	l := mustOpenLogRO(t, dir)
	mustT(t, l.ReadStream(SchemaStream, 1, func(e eventT) error { declared++; return nil }))
	l.Close()
	if declared != 1 {
		t.Fatalf("schema.declared recorded %d times for one shape", declared)
	}
	target := filepath.Join(t.TempDir(), "r.sqlite")
	cp, err := ReplayDeclared(dir, target, ReplayOptions{UpTo: n})
	mustT(t, err)
	if cp != n || digest(t, target) != live {
		t.Fatal("replay with the recorded shapes differs from the live read model")
	}
	d, err := OpenDeclared(dir, Options{HeartbeatInterval: -1})
	mustT(t, err)
	defer d.Close()
	if _, err := Get[Airport](ctx, d, "1"); !errors.Is(err, ErrUnregisteredType) {
		t.Fatalf("typed read on an OpenDeclared store: %v", err)
	}
}

type eventT = events.Event

func mustOpenLogRO(t *testing.T, dir string) *events.Log {
	t.Helper()
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	mustT(t, err)
	return l
}
