package natsbus

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hikoutei/hikoutei-go/events"
)

// readAll runs ReadMirrorWith and returns the delivered events.
func readAll(t *testing.T, cfg Config, stream string) ([]events.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var got []events.Event
	err := ReadMirrorWith(ctx, cfg, stream, func(e events.Event) error {
		got = append(got, e)
		return nil
	})
	return got, err
}

// sameRecords: got are want as mirrored (no fencing token).
func sameRecords(t *testing.T, got, want []events.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		g, err1 := MirrorRecord(got[i])
		w, err2 := MirrorRecord(want[i])
		if err1 != nil || err2 != nil || !slices.Equal(g, w) || got[i].Token != "" {
			t.Fatalf("event %d: got %+v, want %+v (%v %v)", i, got[i], want[i], err1, err2)
		}
	}
}

// TestMirrorExactlyOnceBySeq: mirroring the same events twice (and an
// overlapping batch) stores each seq once: the publisher resumes after the
// stream's tail, also after a restart; the stream is created on first use
// with the default name and subject; ReadMirror returns the events in seq
// order with valid checksums and signatures.
func TestMirrorExactlyOnceBySeq(t *testing.T) {
	dir, key := t.TempDir(), filepath.Join(t.TempDir(), "mirror.nk")
	cfg := Config{Store: "mir-1", Listen: "127.0.0.1:0", StoreDir: dir, Mirror: MirrorConfig{Enabled: true, SigningKeyFile: key}}
	first := startBus(t, cfg)
	all := sampleEvents(1, 600) // > mirrorChunk: several ack batches
	if err := first.Mirror(all[:500]); err != nil {
		t.Fatal(err)
	}
	first.Close()
	b := startBus(t, cfg) // a restart: same JetStream directory and key
	if head, err := b.MirrorHead(); err != nil || head != 500 {
		t.Fatalf("MirrorHead after restart = %d, %v", head, err)
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
	if s := b.Stats(); s.MirroredEvents != 100 || s.MirrorDuplicates != 0 || s.MirrorForeign != 0 || s.MirrorFailure != "" {
		t.Fatalf("stats %+v, want 100 new and nothing else", s)
	}
	if err := b.Mirror(all[590:592]); err != nil { // already there: skipped
		t.Fatal(err)
	}
	if err := b.Mirror(sampleEvents(603, 603)); !errors.Is(err, ErrMirrorPublishFailed) || b.Stats().MirrorFailure != "nats_mirror_publish_failed" {
		t.Fatalf("a batch leaving a gap: %v", err)
	}

	js, err := jetstream.New(clientConn(t, b)) // read-only client permissions suffice
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
	if info.State.Msgs != 600 || !slices.ContainsFunc(info.Config.Subjects, func(p string) bool { return subjectMatches(p, "hikoutei.mir-1.events") }) {
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

	got, err := readAll(t, clientCfg(b), "HIKOUTEI_MIR-1")
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
	err = ReadMirrorWith(ctx, clientCfg(b), "HIKOUTEI_MIR-1", func(events.Event) error {
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
	got, err := readAll(t, Config{URL: url}, "AUDIT")
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
	if _, err := readAll(t, Config{URL: url}, "MISSING"); !errors.Is(err, ErrMirrorReadFailed) {
		t.Fatalf("missing stream: %v", err)
	}
	if got, err := readAll(t, Config{URL: url}, "OTHER"); err != nil || len(got) != 0 {
		t.Fatalf("empty stream: %d events, %v", len(got), err)
	}
}

// TestReadMirrorRejectsCorruptAndReportsGaps: a record with a flipped bit
// fails with ErrMirrorCorrupt and events.ErrCorruptRecord; a message without
// a numeric Nats-Msg-Id fails with ErrMirrorCorrupt; a record re-published
// later (same seq, new stream message) fails with ErrMirrorSequence naming
// it; stream messages deleted in the middle are reported as
// *MirrorGapError after every event was delivered.
func TestReadMirrorRejectsCorruptAndReportsGaps(t *testing.T) {
	_, url := startExternal(t, true)
	js, err := jetstream.New(tcpConn(t, url))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := newMirrorKey(t)
	mk := func(name string) jetstream.Stream {
		s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"t." + name}, Storage: jetstream.MemoryStorage})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	put := func(stream, id string, rec []byte) {
		if _, err := js.PublishMsg(ctx, signedMsg(t, "t."+stream, id, rec, key)); err != nil {
			t.Fatal(err)
		}
	}
	evs := sampleEvents(1, 5)

	mk("CORRUPT")
	put("CORRUPT", "1", record(t, evs[0]))
	bad := record(t, evs[1])
	bad[len(bad)/2] ^= 0x10
	put("CORRUPT", "2", bad)
	got, err := readAll(t, Config{URL: url}, "CORRUPT")
	var re *MirrorRecordError
	if !errors.Is(err, ErrMirrorCorrupt) || !errors.Is(err, events.ErrCorruptRecord) || len(got) != 1 || !errors.As(err, &re) || re.Seq != 2 {
		t.Fatalf("corrupt: %d events, %v", len(got), err)
	}

	mk("WRONGSEQ")
	put("WRONGSEQ", "3", record(t, evs[0])) // record claims seq 1
	if _, err := readAll(t, Config{URL: url}, "WRONGSEQ"); !errors.Is(err, events.ErrCorruptRecord) {
		t.Fatalf("seq mismatch: %v", err)
	}

	mk("NOID")
	put("NOID", "", record(t, evs[0]))
	if _, err := readAll(t, Config{URL: url}, "NOID"); !errors.Is(err, ErrMirrorCorrupt) {
		t.Fatalf("no id: %v", err)
	}

	mk("REPUB")
	for _, id := range []string{"1", "2", "3", "02"} { // seqs 1 2 3, then 2 again ("02" escapes the dedupe window)
		seq, _ := strconv.Atoi(id)
		put("REPUB", id, record(t, evs[seq-1]))
	}
	got, err = readAll(t, Config{URL: url}, "REPUB")
	if !errors.Is(err, ErrMirrorSequence) || !errors.As(err, &re) || re.Seq != 2 || re.StreamSeq != 4 || len(got) != 3 {
		t.Fatalf("re-publish: %d events, %v", len(got), err)
	}

	gap := mk("GAP")
	for i := range evs {
		put("GAP", strconv.Itoa(i+1), record(t, evs[i]))
	}
	if err := gap.DeleteMsg(ctx, 3); err != nil {
		t.Fatal(err)
	}
	got, err = readAll(t, Config{URL: url}, "GAP")
	var ge *MirrorGapError
	if !errors.As(err, &ge) || !errors.Is(err, ErrMirrorGap) || ge.After != 2 || ge.Next != 4 || ge.Gaps != 1 {
		t.Fatalf("gap: %v", err)
	}
	sameRecords(t, got, []events.Event{evs[0], evs[1], evs[3], evs[4]})

	if err := ReadMirror(ctx, "", "GAP", func(events.Event) error { return nil }); !errors.Is(err, ErrConfigInvalid) {
		t.Fatalf("no url: %v", err)
	}
}
