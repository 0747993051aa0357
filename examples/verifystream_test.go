package examples_test

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Gauge is the entity the stream example's store commits.
type Gauge struct {
	ID    string `hikoutei:"id,pk"`
	Level int64  `hikoutei:"level"`
}

const auditStream = "HIKOUTEI_GAUGES"

// startJetStream runs a real NATS server with JetStream on loopback.
func startJetStream(t *testing.T) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	return srv.ClientURL()
}

// mirroredStore commits n gauges to a store mirroring to url, waits until
// the stream holds them all and returns the store's verified head.
func mirroredStore(t *testing.T, url string, n int) *hikoutei.VerifyReport {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gauges")
	o := hikoutei.Options{Logger: slog.New(slog.DiscardHandler),
		NATS: &hikoutei.NATSOptions{URL: url, Store: "gauges", Mirror: true, MirrorStream: auditStream}}
	s, err := hikoutei.Open(t.Context(), dir, o, hikoutei.Entity[Gauge]("Gauge"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		u := s.Begin()
		if err := u.Persist(&Gauge{ID: fmt.Sprint(i % 4), Level: int64(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.Verify(t.Context(), hikoutei.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitStream(t, url, func(st jetstream.StreamState) bool { return st.Msgs >= rep.Head })
	return rep
}

// waitStream waits until the audit stream's state satisfies cond.
func waitStream(t *testing.T, url string, cond func(jetstream.StreamState) bool) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		if s, err := js.Stream(t.Context(), auditStream); err == nil && cond(s.CachedInfo().State) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the mirror stream never caught up with the store")
		}
	}
}

// The stream example builds, reads a store's JetStream mirror with nats.go
// alone and prints the store's own head (Verify's), checked from the
// genesis value of the store id and against that head as a pin; a record
// forged into the stream (its checksum recomputed) fails it.
func TestVerifyStreamExamplePrintsTheStoresHead(t *testing.T) {
	url := startJetStream(t)
	rep := mirroredStore(t, url, 12)
	bin := build(t, "verifystream")
	pin := fmt.Sprintf("%d:%s", rep.Head, rep.HeadHash)
	args := []string{"-nats", url, "-stream", auditStream, "-store", rep.StoreID}
	want := fmt.Sprintf("verified %d records\nhead %s\n", rep.Head, pin)
	if got := runProgram(t, bin, nil, append(args, "-pin", pin)...); got != want {
		t.Fatalf("verifystream printed\n%s\nwant\n%s", got, want)
	}
	other := fmt.Sprintf("%d:%s", rep.Head, strings.Repeat("0", 64))
	if err := exec.CommandContext(t.Context(), bin, append(args, "-pin", other)...).Run(); err == nil {
		t.Fatal("verifystream accepted a pin the stream does not extend")
	}
	forgeLast(t, url, rep.Head)
	out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Hikoutei-Chain header is not its chain value") {
		t.Fatalf("a forged record: %v\n%s", err, out)
	}
}

// forgeLast replaces the stream's last record by a copy with one payload
// byte changed and its checksum recomputed, keeping its headers.
func forgeLast(t *testing.T, url string, head uint64) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(t.Context(), auditStream)
	if err != nil {
		t.Fatal(err)
	}
	last, err := s.GetMsg(t.Context(), s.CachedInfo().State.LastSeq)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMsg(t.Context(), last.Sequence); err != nil {
		t.Fatal(err)
	}
	data := append([]byte(nil), last.Data...)
	data[len(data)-10] ^= 1 // the payload's last byte
	binary.LittleEndian.PutUint64(data[len(data)-8:], xxhash.Sum64(data[:len(data)-8]))
	m := &nats.Msg{Subject: last.Subject, Header: last.Header, Data: data}
	m.Header.Set(jetstream.MsgIDHeader, fmt.Sprint(head)+"-forged")
	if _, err := js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
}
