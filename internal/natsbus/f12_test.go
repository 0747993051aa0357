package natsbus

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hikoutei/hikoutei-go/events"
)

// consumerCreate sends a raw consumer-create request as a client of the
// listener (the API subject an old or a hand-written client uses, with the
// deliver subject in the body) and returns the server's answer.
func consumerCreate(t *testing.T, nc *nats.Conn, subject, stream, body string) map[string]any {
	t.Helper()
	m, err := nc.Request(subject, []byte(`{"stream_name":"`+stream+`","config":`+body+`}`), deadline)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var out map[string]any
	if err := json.Unmarshal(m.Data, &out); err != nil {
		t.Fatalf("%s: %s", subject, m.Data)
	}
	return out
}

// F12: an authenticated reader of an embedded listener cannot make the
// server publish on the store's own subjects: a push consumer delivering
// into hikoutei.<store>.chain.head, conflict.opened, conflict.resolved,
// events or any other subject the store alone publishes is refused by the
// real nats-server (the mirror stream guards them: "forms a cycle"),
// through the legacy and the named create subjects (the durable one is not
// a client's to use: permissions), and a
// push consumer cannot be moved there by an update either; subscribers of
// those subjects get nothing from it. The store's own chain.head and
// conflict notifications still reach subscribers and are never stored in
// the stream; pull and ordered consumers (ReadMirror) still work.
func TestF12_AReaderCannotCreateAPushConsumerDeliveringIntoTheStoresSubjects(t *testing.T) {
	b := startBus(t, Config{Store: "guard", Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Mirror: MirrorConfig{Enabled: true}})
	if err := b.Mirror(sampleEvents(1, 20)); err != nil {
		t.Fatal(err)
	}
	nc := clientConn(t, b)
	st := b.MirrorStream()
	relayed := make(chan *nats.Msg, 100)
	for _, s := range []string{b.Subject(SuffixChainHead), b.Subject(SuffixConflictOpened), b.Subject(SuffixConflictResolved), "hikoutei.guard.>"} {
		sub, err := nc.ChanSubscribe(s, relayed)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{b.Subject(SuffixChainHead), b.Subject(SuffixConflictOpened), b.Subject(SuffixConflictResolved),
		b.Subject(SuffixEvents), "hikoutei.guard.other", "hikoutei.guard.a.b.c"} {
		push := `{"deliver_subject":"` + target + `","ack_policy":"none","deliver_policy":"all"}`
		named := `{"name":"evil","deliver_subject":"` + target + `","ack_policy":"none","deliver_policy":"all"}`
		for subject, body := range map[string]string{"$JS.API.CONSUMER.CREATE." + st: push, "$JS.API.CONSUMER.CREATE." + st + ".evil": named} {
			resp := consumerCreate(t, nc, subject, st, body)
			e, refused := resp["error"].(map[string]any)
			if !refused || !strings.Contains(e["description"].(string), "cycle") {
				t.Fatalf("%s delivering into %s: %v", subject, target, resp)
			}
		}
	}
	// A push consumer into a client's own inbox is allowed; it cannot be
	// moved onto the store's subjects.
	inbox := nats.NewInbox()
	resp := consumerCreate(t, nc, "$JS.API.CONSUMER.CREATE."+st+".mine", st,
		`{"name":"mine","deliver_subject":"`+inbox+`","ack_policy":"none","deliver_policy":"all"}`)
	if resp["error"] != nil {
		t.Fatalf("a push consumer into the client's inbox: %v", resp)
	}
	resp = consumerCreate(t, nc, "$JS.API.CONSUMER.CREATE."+st+".mine", st,
		`{"name":"mine","deliver_subject":"`+b.Subject(SuffixChainHead)+`","ack_policy":"none","deliver_policy":"all"}`)
	if resp["error"] == nil {
		t.Fatalf("a push consumer moved onto chain.head: %v", resp)
	}
	select {
	case m := <-relayed:
		t.Fatalf("the server delivered %d bytes on %s", len(m.Data), m.Subject)
	case <-time.After(300 * time.Millisecond): // nothing may arrive: a bounded look
	}

	// The store's own notifications reach subscribers and are not stored.
	heads := make(chan ChainHeadNotification, 4)
	stop, err := b.SubscribeChainHeads(func(n ChainHeadNotification) { heads <- n })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	b.PublishChainHead(mustPin(t, 20))
	if n := recv(t, heads, "the store's chain head"); n.Seq != 20 {
		t.Fatalf("chain.head %+v", n)
	}
	if err := b.PublishConflictOpened(ConflictNotification{ConflictID: "c", Entity: "A", ID: "1", Field: "f"}); err != nil {
		t.Fatal(err)
	}
	recv(t, relayed, "the store's conflict notification")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	if msgs := s.CachedInfo().State.Msgs; msgs != 20 {
		t.Fatalf("the stream holds %d messages, want the 20 records only", msgs)
	}
	if got, err := readAll(t, clientCfg(b), st); err != nil || len(got) != 20 {
		t.Fatalf("an ordered consumer reads %d records: %v", len(got), err)
	}
	if err := b.Mirror(sampleEvents(21, 22)); err != nil {
		t.Fatalf("the mirror goes on: %v", err)
	}
}

// mustPin is a chain head at seq with an arbitrary hash.
func mustPin(t *testing.T, seq uint64) events.ChainPin {
	t.Helper()
	h, err := events.ParseChainHash(strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	return events.ChainPin{Seq: seq, Hash: h}
}

// F12: a mirror stream an earlier version created (the mirror subject
// alone) is given the guarding subjects when the store next mirrors.
func TestF12_AnOlderMirrorStreamIsGivenTheGuards(t *testing.T) {
	b := startBus(t, Config{Store: "old", Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Mirror: MirrorConfig{Enabled: true}})
	js, err := jetstream.New(b.nc) // the store's own connection: as the earlier version created it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: b.MirrorStream(), Subjects: []string{b.Subject(SuffixEvents)}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Mirror(sampleEvents(1, 3)); err != nil {
		t.Fatal(err)
	}
	resp := consumerCreate(t, clientConn(t, b), "$JS.API.CONSUMER.CREATE."+b.MirrorStream(), b.MirrorStream(),
		`{"deliver_subject":"`+b.Subject(SuffixChainHead)+`","ack_policy":"none"}`)
	if resp["error"] == nil {
		t.Fatalf("a push consumer into chain.head on the upgraded stream: %v", resp)
	}
}

// I36 with a log that has holes (sequences a salvage or an accepted log
// gap lost, F8): the mirror steps over them, within a call and after the
// stream's tail, marking the record after each (Hikoutei-Lost), and a
// reader accepts exactly those jumps and reports the holes. Without the
// holes registered, a jump is refused; a jump whose header names other
// sequences is refused by the reader.
func TestI36_TheMirrorStepsOverTheLogsHoles(t *testing.T) {
	b := startBus(t, Config{Store: "holes", Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Mirror: MirrorConfig{Enabled: true}})
	all := sampleEvents(1, 12)
	kept := append(append(append([]events.Event(nil), all[:3]...), all[5:8]...), all[10:]...) // 4-5 and 9-10 lost
	if err := b.Mirror(kept[:4]); !errors.Is(err, ErrMirrorPublishFailed) {
		t.Fatalf("a jump without the holes registered: %v", err)
	}
	var lost events.SeqRanges
	lost.AddRange(4, 5)
	lost.AddRange(9, 10)
	b.SetLogHoles(lost)
	if err := b.Mirror(kept[:5]); err != nil { // 1-3, 6-7: a jump inside the call
		t.Fatal(err)
	}
	if err := b.Mirror(kept[5:]); err != nil { // 8, 11-12: the tail is 7
		t.Fatal(err)
	}
	if err := b.Mirror(kept[7:]); err != nil { // 11-12 after the tail 8: a jump after the tail
		t.Fatal(err)
	}
	if b.MirroredHead() != 12 {
		t.Fatalf("mirrored head %d", b.MirroredHead())
	}
	var seqs []uint64
	rep, err := ReadMirrorReport(t.Context(), clientCfg(b), b.MirrorStream(), func(ev events.Event) error {
		seqs = append(seqs, ev.Seq)
		return nil
	})
	if err != nil || rep.Holes.String() != lost.String() || len(seqs) != 8 || rep.Last != 12 {
		t.Fatalf("read %v, holes %q: %v", seqs, rep.Holes, err)
	}
	v := &chainVerifier{stream: "x"}
	if err := v.checkSequence(1, 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := v.checkSequence(2, 5, "2-3"); !errors.Is(err, ErrMirrorSequence) {
		t.Fatalf("a jump naming other sequences: %v", err)
	}
	if err := v.checkSequence(2, 5, ""); !errors.Is(err, ErrMirrorSequence) {
		t.Fatalf("a jump naming nothing: %v", err)
	}
}
