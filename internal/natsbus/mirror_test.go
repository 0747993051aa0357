package natsbus

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hikoutei/hikoutei-go/events"
)

// readAll runs ReadMirror and returns the delivered events.
func readAll(t *testing.T, url, stream string) ([]events.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var got []events.Event
	err := ReadMirror(ctx, url, stream, func(e events.Event) error {
		got = append(got, e)
		return nil
	})
	return got, err
}

func sameRecords(t *testing.T, got, want []events.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		g, err1 := events.MarshalRecord(got[i])
		w, err2 := events.MarshalRecord(want[i])
		if err1 != nil || err2 != nil || !slices.Equal(g, w) {
			t.Fatalf("event %d: got %+v, want %+v (%v %v)", i, got[i], want[i], err1, err2)
		}
	}
}

// TestMirrorExactlyOnceBySeq: mirroring the same events twice (and an
// overlapping batch) stores each seq once thanks to Nats-Msg-Id; the stream
// is created on first use with the default name and subject; ReadMirror
// returns the events in seq order with valid checksums.
func TestMirrorExactlyOnceBySeq(t *testing.T) {
	b := startBus(t, Config{Store: "mir-1", Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Mirror: MirrorConfig{Enabled: true}})
	all := sampleEvents(1, 600) // > mirrorChunk: several ack batches
	if err := b.Mirror(all[:500]); err != nil {
		t.Fatal(err)
	}
	if err := b.Mirror(all[:500]); err != nil { // the same events again
		t.Fatal(err)
	}
	if err := b.Mirror(all[450:]); err != nil { // overlapping tail
		t.Fatal(err)
	}
	if err := b.Mirror(nil); err != nil {
		t.Fatal(err)
	}
	s := b.Stats()
	if s.MirroredEvents != 600 || s.MirrorDuplicates != 550 {
		t.Fatalf("stats %+v, want 600 new and 550 duplicates", s)
	}

	js, err := jetstream.New(inProc(t, b))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := js.Stream(ctx, "HIKOUTEI_MIR-1")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 600 || info.Config.Subjects[0] != "hikoutei.mir-1.events" {
		t.Fatalf("stream has %d messages on %v", info.State.Msgs, info.Config.Subjects)
	}
	// Each stream message n carries seq n exactly once.
	for _, n := range []uint64{1, 256, 257, 500, 501, 600} {
		m, err := st.GetMsg(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if id := m.Header.Get("Nats-Msg-Id"); id != strconv.FormatUint(n, 10) {
			t.Fatalf("stream msg %d has Nats-Msg-Id %q", n, id)
		}
	}

	got, err := readAll(t, b.ListenURL(), "HIKOUTEI_MIR-1")
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, all)
	for i, e := range got {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}

	// fn's error stops the read and is returned as is.
	boom := errors.New("boom")
	n := 0
	err = ReadMirror(ctx, b.ListenURL(), "HIKOUTEI_MIR-1", func(events.Event) error {
		if n++; n == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || n != 10 {
		t.Fatalf("fn error: %v after %d", err, n)
	}
}

// TestMirrorViaURLCustomStream: mirroring to an external JetStream server
// (second embedded server, Config.URL) with a configured stream name and
// subject; an existing stream that does not capture the subject is refused.
func TestMirrorViaURLCustomStream(t *testing.T) {
	_, url := startExternal(t, true)
	b := startBus(t, Config{Store: "ext", URL: url, Mirror: MirrorConfig{Enabled: true, Stream: "AUDIT", Subject: "audit.ext.log", Memory: true}})
	evs := sampleEvents(1, 20)
	for range 2 {
		if err := b.Mirror(evs); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readAll(t, url, "AUDIT")
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, evs)

	// An existing stream on other subjects is not silently written around.
	js, _ := jetstream.New(tcpConn(t, url))
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"other.>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	wrong := startBus(t, Config{Store: "ext", URL: url, Mirror: MirrorConfig{Enabled: true, Stream: "OTHER"}})
	if err := wrong.Mirror(evs[:1]); !errors.Is(err, ErrMirrorPublishFailed) {
		t.Fatalf("mirror into a stream without our subject: %v", err)
	}
	if err := b.Mirror([]events.Event{{Stream: "s", Payload: events.EntityRemoved{Entity: "Airport", ID: "s"}}}); !errors.Is(err, ErrMirrorPublishFailed) {
		t.Fatalf("unstamped event: %v", err)
	}
	if _, err := readAll(t, url, "MISSING"); !errors.Is(err, ErrMirrorReadFailed) {
		t.Fatalf("missing stream: %v", err)
	}
	if got, err := readAll(t, url, "OTHER"); err != nil || len(got) != 0 {
		t.Fatalf("empty stream: %d events, %v", len(got), err)
	}
}

// TestReadMirrorRejectsCorruptAndReportsGaps: a record with a flipped bit
// fails with ErrMirrorCorrupt and events.ErrCorruptRecord; a message without
// a numeric Nats-Msg-Id fails with ErrMirrorCorrupt; a hole in the seqs is
// reported as *MirrorGapError after every event was delivered; a re-publish
// outside the dedupe window (same seq, new stream message) is skipped.
func TestReadMirrorRejectsCorruptAndReportsGaps(t *testing.T) {
	_, url := startExternal(t, true)
	js, err := jetstream.New(tcpConn(t, url))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mk := func(name string) {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"t." + name}, Storage: jetstream.MemoryStorage}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(stream, id string, rec []byte) {
		m := nats.NewMsg("t." + stream)
		if id != "" {
			m.Header.Set("Nats-Msg-Id", id)
		}
		m.Data = rec
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(e events.Event) []byte {
		b, err := events.MarshalRecord(e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	evs := sampleEvents(1, 5)

	mk("CORRUPT")
	put("CORRUPT", "1", rec(evs[0]))
	bad := rec(evs[1])
	bad[len(bad)/2] ^= 0x10
	put("CORRUPT", "2", bad)
	got, err := readAll(t, url, "CORRUPT")
	if !errors.Is(err, ErrMirrorCorrupt) || !errors.Is(err, events.ErrCorruptRecord) || len(got) != 1 {
		t.Fatalf("corrupt: %d events, %v", len(got), err)
	}

	mk("WRONGSEQ")
	put("WRONGSEQ", "3", rec(evs[0])) // record claims seq 1
	if _, err := readAll(t, url, "WRONGSEQ"); !errors.Is(err, events.ErrCorruptRecord) {
		t.Fatalf("seq mismatch: %v", err)
	}

	mk("NOID")
	put("NOID", "", rec(evs[0]))
	if _, err := readAll(t, url, "NOID"); !errors.Is(err, ErrMirrorCorrupt) {
		t.Fatalf("no id: %v", err)
	}

	mk("GAP")
	for _, i := range []int{0, 1, 3, 1, 4} { // seqs 1 2 4 (2 again: a late re-publish) 5
		put("GAP", strconv.Itoa(i+1), rec(evs[i]))
	}
	got, err = readAll(t, url, "GAP")
	var ge *MirrorGapError
	if !errors.As(err, &ge) || !errors.Is(err, ErrMirrorGap) || ge.After != 2 || ge.Next != 4 || ge.Gaps != 1 {
		t.Fatalf("gap: %v", err)
	}
	sameRecords(t, got, []events.Event{evs[0], evs[1], evs[3], evs[4]})

	if err := ReadMirror(ctx, "", "GAP", func(events.Event) error { return nil }); !errors.Is(err, ErrConfigInvalid) {
		t.Fatalf("no url: %v", err)
	}
}
