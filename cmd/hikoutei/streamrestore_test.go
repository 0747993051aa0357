package main

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
	"github.com/hikoutei/hikoutei-go/projector"
)

// replicatedLog opens a log in a new directory that replicates every
// commit to store's stream on c, takes its lease and commits n units.
func replicatedLog(t *testing.T, c *replicationtest.Cluster, store string, n int) *events.Log {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), replicationtest.Deadline)
	defer cancel()
	stream, err := replication.Open(ctx, c.Connect(), replication.Config{Store: store, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	l, err := events.OpenLog(filepath.Join(t.TempDir(), events.LogFileName), events.Options{Replicator: &replication.Replicator{Log: stream, Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	lease, err := l.AcquireLease(events.AcquireRequest{WriterID: "primary", Operation: "test"})
	if err != nil {
		t.Fatal(err)
	}
	copyEntityEvents(t, l, lease.Fence())
	for i := range n {
		u := events.Unit{Streams: []events.StreamAppend{{Stream: events.SyncStream(fmt.Sprint(i % 4)), ExpectedVersion: events.AnyVersion,
			Events: []events.Event{{Payload: events.SyncDiverged{Target: fmt.Sprint(i), Reason: "r"}}, {Payload: events.SyncDiverged{Target: "x", Reason: "s"}}}}}}
		if _, err := l.Append(lease.Fence(), u); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	return l
}

// copyEntityEvents commits through l, one commit each, the schema and
// entity events of a store of items (no lease event), so the stream
// declares entities and the restored read model has rows.
func copyEntityEvents(t *testing.T, l *events.Log, fence events.Fence) {
	t.Helper()
	for _, e := range logEvents(t, filepath.Join(storeWithItems(t, 6), events.LogFileName)) {
		if strings.HasPrefix(e.Stream, events.LeaseStream("")) {
			continue
		}
		u := events.Unit{Streams: []events.StreamAppend{{Stream: e.Stream, ExpectedVersion: events.AnyVersion, Events: []events.Event{{Payload: e.Payload}}}}}
		if _, err := l.Append(fence, u); err != nil {
			t.Fatalf("copy %s: %v", e.Type(), err)
		}
	}
}

// withoutTokens reads l's events with their fencing tokens cleared (a
// token never leaves its store).
func withoutTokens(t *testing.T, l *events.Log) []events.Event {
	t.Helper()
	var out []events.Event
	if err := l.ReadFrom(1, func(e events.Event) error { e.Token = ""; out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestI31_RestoreAndAuditFromTheReplicatedStreamEqualTheSourceLog(t *testing.T) {
	t.Parallel()
	c := replicationtest.StartCluster(t, 3)
	src := replicatedLog(t, c, "shop-7", 25)
	head, err := src.Head()
	if err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	code, text := runCLI(t, "restore", "--nats", c.URLs(), "--store", "shop-7", "--to", restored)
	if code != exitOK || !strings.Contains(text, fmt.Sprintf("at head %d", head)) || !strings.Contains(text, fmt.Sprintf("checkpoint %d", head)) {
		t.Fatalf("restore from the stream: exit %d:\n%s", code, text)
	}
	got := logEvents(t, filepath.Join(restored, events.LogFileName))
	if want := withoutTokens(t, src); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %d events, the source holds %d", len(got), len(want))
	}
	sameReadModelAsTheSource(t, src, restored)
	code, text = runCLI(t, "audit", "--nats", c.URLs(), "--store", "shop-7", "--json")
	if code != exitOK || !strings.Contains(text, fmt.Sprintf("up to log head %d", head)) || strings.Count(text, `"type":"`+string(events.TypeSyncDiverged)+`"`) != 50 {
		t.Fatalf("audit of the stream: exit %d:\n%s", code, text)
	}
	if code, text := runCLI(t, "audit", "--nats", c.URLs(), "--store", "no-such-store"); code != exitFailure || !strings.Contains(text, "replication_stream_not_found") {
		t.Fatalf("audit of a missing stream: exit %d:\n%s", code, text)
	}
	if code, text := runCLI(t, "restore", "--nats", c.URLs(), "--store", "shop-7", "--to", restored); code != exitFailure || !strings.Contains(text, "restore_target_not_empty") {
		t.Fatalf("restore into the restored store: exit %d:\n%s", code, text)
	}
}

// sameReadModelAsTheSource closes src and checks that the restored read
// model equals one rebuilt from src's log, row by row, but for the store
// id (a store restored from the stream has its own).
func sameReadModelAsTheSource(t *testing.T, src *events.Log, restored string) {
	t.Helper()
	srcDir, srcID := filepath.Dir(src.Path()), src.StoreID()
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(t.TempDir(), "source.sqlite")
	if _, err := hikoutei.Replay(t.Context(), srcDir, want, hikoutei.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := events.OpenLog(filepath.Join(restored, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	restoredID := l.StoreID()
	l.Close()
	a, b := dumpReadModel(t, want, srcID), dumpReadModel(t, filepath.Join(restored, hikoutei.ReadModelFile), restoredID)
	if a != b || !strings.Contains(a, "== Item") {
		t.Fatalf("restored read model differs from the source's:\n%s\n----\n%s", b, a)
	}
}

// dumpReadModel is the read model's rows as text, its store id replaced.
func dumpReadModel(t *testing.T, path, storeID string) string {
	t.Helper()
	var buf strings.Builder
	if err := projector.Dump(path, &buf); err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(buf.String(), storeID, "<store id>")
}

// R1: restore --store NAME writes the store id the stream's records carry
// (the one the first primary claimed the stream for), not NAME: the
// restored log passes its own chain check, a standby of the store accepts
// it (the log of another id would be store_id_mismatch), and audit
// --store, which shares the path, reads it as that store's.
func TestR1_RestoreFromTheStreamKeepsTheStoreIDTheRecordsCarry(t *testing.T) {
	t.Parallel()
	c := replicationtest.StartCluster(t, 3)
	src := replicatedLog(t, c, "shop-8", 5)
	ctx, cancel := context.WithTimeout(context.Background(), replicationtest.Deadline)
	defer cancel()
	stream, err := replication.OpenExisting(ctx, c.Connect(), "shop-8")
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.ClaimStoreID(ctx, src.StoreID()); err != nil { // what the first primary does
		t.Fatal(err)
	}
	if src.StoreID() == "shop-8" {
		t.Fatal("the source's id must differ from the store's name for this test")
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if code, text := runCLI(t, "restore", "--nats", c.URLs(), "--store", "shop-8", "--to", restored); code != exitOK ||
		!strings.Contains(text, "restored store "+src.StoreID()) {
		t.Fatalf("restore: exit %d:\n%s", code, text)
	}
	if code, text := runCLI(t, "audit", "verify", "--dir", restored); code != exitOK || !strings.Contains(text, "of store "+src.StoreID()) {
		t.Fatalf("audit verify of the restored log: exit %d:\n%s", code, text)
	}
	if code, text := runCLI(t, "audit", "--nats", c.URLs(), "--store", "shop-8"); code != exitOK {
		t.Fatalf("audit --store: exit %d:\n%s", code, text)
	}
	sb, err := hikoutei.OpenDeclared(t.Context(), restored, hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true,
		NATS:        &hikoutei.NATSOptions{Disabled: true},
		Replication: &hikoutei.ReplicationOptions{URL: c.URLs(), Store: "shop-8", Standby: true}})
	if err != nil {
		t.Fatalf("a standby on the restored directory: %v", err)
	}
	defer sb.Close()
	if h := sb.Health(); h.Replication == nil || h.Replication.Role != hikoutei.RoleStandby {
		t.Fatalf("standby health %+v", h)
	}
}
