package hikoutei

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

func TestLogRecordsEntityShapesAndToolsOpenWithoutGoTypes(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 30)
	live := digest(t, s.ReadModelPath())
	n := checkpoint(t, s)
	mustT(t, s.Close())
	s = openStore(t, dir) // same shapes: nothing new is recorded
	mustT(t, s.Close())
	var declared int
	l := mustOpenLogRO(t, dir)
	mustT(t, l.ReadStream(events.SchemaStream, 1, func(events.Event) error { declared++; return nil }))
	l.Close()
	if declared != 1 {
		t.Fatalf("%s recorded %d times for one shape", events.TypeSchemaDeclared, declared)
	}
	target := filepath.Join(t.TempDir(), "r.sqlite")
	cp, err := Replay(t.Context(), dir, target, ReplayOptions{UpTo: n}) // no entities: the shapes the log declares
	mustT(t, err)
	if cp != n || digest(t, target) != live {
		t.Fatal("replay with the recorded shapes differs from the live read model")
	}
	d, err := OpenDeclared(t.Context(), dir, Options{HeartbeatInterval: -1})
	mustT(t, err)
	defer d.Close()
	if _, err := Get[Airport](ctx, d, "1"); !errors.Is(err, ErrUnregisteredType) {
		t.Fatalf("typed read on an OpenDeclared store: %v", err)
	}
}

func mustOpenLogRO(t *testing.T, dir string) *events.Log {
	t.Helper()
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	mustT(t, err)
	return l
}
