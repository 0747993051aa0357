package natsbus

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/hikoutei/hikoutei-go/events"
)

// Repro 10 (hostile peers): an unauthenticated client read every mirrored
// record, each carrying the fencing token, and could publish a forged
// record for the next seq that readers returned without error.

// liveToken stands for a writer's fencing token (128 random bits, hex).
const liveToken = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"

func withToken(evs []events.Event) []events.Event {
	for i := range evs {
		evs[i].Token = liveToken
	}
	return evs
}

// userSeed writes a new user seed file and returns its path and public key.
func userSeed(t *testing.T) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "user.nk")
	kp, _, err := loadOrCreateSeed(path, nkeys.PrefixByteUser)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	return path, pub
}

func seedOpt(t *testing.T, path string) nats.Option {
	t.Helper()
	o, err := nats.NkeyOptionFromSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// sharedAccount is an external JetStream server whose two users share one
// account with full rights: the store, and a hostile but authenticated
// client (e.g. another application on the same NATS deployment).
type sharedAccount struct {
	url                     string
	storeSeed, hostileSeed  string
	store                   *Bus
	hostile                 jetstream.JetStream
	hostileKey              nkeys.KeyPair
	stream, subject         string
	evs                     []events.Event
	mirroredBeforeTheForger int
}

func newSharedAccount(t *testing.T) *sharedAccount {
	t.Helper()
	x := &sharedAccount{stream: "HIKOUTEI_VICTIM", subject: "hikoutei.victim.events", evs: withToken(sampleEvents(1, 8))}
	var storePub, hostilePub string
	x.storeSeed, storePub = userSeed(t)
	x.hostileSeed, hostilePub = userSeed(t)
	_, x.url = startExternal(t, true, func(o *server.Options) {
		o.Nkeys = []*server.NkeyUser{{Nkey: storePub}, {Nkey: hostilePub}}
	})
	x.store = startBus(t, Config{Store: "victim", URL: x.url, NkeyFile: x.storeSeed, Mirror: MirrorConfig{Enabled: true, Memory: true}})
	if err := x.store.Mirror(x.evs[:5]); err != nil {
		t.Fatal(err)
	}
	x.mirroredBeforeTheForger = 5
	js, err := jetstream.New(tcpConn(t, x.url, seedOpt(t, x.hostileSeed)))
	if err != nil {
		t.Fatal(err)
	}
	x.hostile, x.hostileKey = js, newMirrorKey(t)
	return x
}

// forge publishes, as the hostile client, a record for seq with a valid
// checksum and Nats-Msg-Id id, signed with the hostile's own key.
func (x *sharedAccount) forge(t *testing.T, id string, seq uint64) {
	t.Helper()
	ev := sampleEvents(seq, seq)[0]
	p := ev.Payload.(events.EntityPersisted)
	p.Fields = map[string]any{"name": "forged", "n": int64(-1)}
	ev.Payload = p
	if _, err := x.hostile.PublishMsg(context.Background(), signedMsg(t, x.subject, id, record(t, ev), x.hostileKey)); err != nil {
		t.Fatal(err)
	}
}

func TestRepro10_UnauthenticatedClientCannotConnectToAListeningServer(t *testing.T) {
	b := startBus(t, Config{Store: "auth", Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Mirror: MirrorConfig{Enabled: true}})
	if b.ListenMode() != ListenAuthenticated || !b.Connected() {
		t.Fatalf("mode %s, store connected %v", b.ListenMode(), b.Connected())
	}
	if err := b.Mirror(sampleEvents(1, 2)); err != nil { // the store's own in-process connection works
		t.Fatal(err)
	}
	if nc, err := nats.Connect(b.ListenURL(), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("a client without credentials connected")
	}
	strangerSeed, _ := userSeed(t)
	if nc, err := nats.Connect(b.ListenURL(), nats.NoReconnect(), seedOpt(t, strangerSeed)); err == nil {
		nc.Close()
		t.Fatal("a client with an unknown nkey connected")
	}
	if _, err := readAll(t, Config{URL: b.ListenURL()}, "HIKOUTEI_AUTH"); !errors.Is(err, ErrMirrorReadFailed) {
		t.Fatalf("mirror read without credentials: %v", err)
	}
	if got, err := readAll(t, clientCfg(b), "HIKOUTEI_AUTH"); err != nil || len(got) != 2 {
		t.Fatalf("mirror read with the generated credentials: %d events, %v", len(got), err)
	}
}

func TestRepro10_MirrorRecordsContainNoFencingToken(t *testing.T) {
	b := startBus(t, Config{Store: "tok", Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Mirror: MirrorConfig{Enabled: true}})
	evs := withToken(sampleEvents(1, 3))
	if err := b.Mirror(evs); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(clientConn(t, b))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), "HIKOUTEI_TOK")
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		m, err := st.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(m.Data, []byte(liveToken)) || strings.Contains(strings.Join(m.Header.Values(HeaderSigner), ""), liveToken) {
			t.Fatalf("stream message %d carries the fencing token", seq)
		}
		ev, err := events.DecodeRecord(seq, m.Data) // the mirrored form has its own valid checksum
		if err != nil || ev.Token != "" || ev.Epoch != evs[seq-1].Epoch {
			t.Fatalf("stream message %d: %+v, %v", seq, ev, err)
		}
	}
	got, err := readAll(t, clientCfg(b), "HIKOUTEI_TOK")
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, evs)
}

func TestRepro10_ForgedRecordForTheNextSeqIsAnErrorAtThatSeq(t *testing.T) {
	x := newSharedAccount(t)
	x.forge(t, "6", 6)
	for _, pin := range []string{"", x.store.MirrorKey()} {
		got, err := readAll(t, Config{URL: x.url, NkeyFile: x.hostileSeed, Mirror: MirrorConfig{VerifyKey: pin}}, x.stream)
		var re *MirrorRecordError
		if !errors.Is(err, ErrMirrorForged) || !errors.As(err, &re) || re.Seq != 6 || re.StreamSeq != 6 || !strings.Contains(err.Error(), "log seq 6") {
			t.Fatalf("pinned %q: forged seq 6 read as %v", pin, err)
		}
		sameRecords(t, got, x.evs[:5]) // everything before it was delivered
	}
	// Claiming the store's key does not help without its private key.
	v := &chainVerifier{stream: x.stream}
	if err := v.pin(x.store.MirrorKey()); err != nil {
		t.Fatal(err)
	}
	m := signedMsg(t, x.subject, "1", record(t, x.evs[0]), x.hostileKey)
	m.Header.Set(HeaderSigner, x.store.MirrorKey())
	if _, err := v.check(1, m.Header, m.Data); !errors.Is(err, ErrMirrorForged) {
		t.Fatalf("forged signature under the store's key: %v", err)
	}
}

func TestRepro10_ReplayedGenuineRecordBreaksTheSequenceChain(t *testing.T) {
	x := newSharedAccount(t)
	// The hostile copies a genuine, signed record and re-publishes it under
	// a Nats-Msg-Id the dedupe window does not know.
	st, err := x.hostile.Stream(context.Background(), x.stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	replay := nats.NewMsg(x.subject)
	replay.Header, replay.Data = m.Header, m.Data
	replay.Header.Set(jetstream.MsgIDHeader, "03")
	if _, err := x.hostile.PublishMsg(context.Background(), replay); err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, Config{URL: x.url, NkeyFile: x.hostileSeed}, x.stream)
	var re *MirrorRecordError
	if !errors.Is(err, ErrMirrorSequence) || !errors.As(err, &re) || re.Seq != 3 || re.StreamSeq != 6 {
		t.Fatalf("replayed seq 3 read as %v", err)
	}
	// The publisher sees its next record land one position late.
	err = x.store.Mirror(x.evs[5:6])
	if !errors.Is(err, ErrMirrorForeignRecord) || !errors.As(err, &re) || re.Seq != 6 || re.StreamSeq != 7 {
		t.Fatalf("publisher after a foreign message: %v", err)
	}
}

func TestRepro10_PublisherTreatsAForeignDuplicateAckAsAFailure(t *testing.T) {
	x := newSharedAccount(t)
	x.forge(t, "6", 6) // someone else publishes Nats-Msg-Id 6 first
	err := x.store.Mirror(x.evs[5:6])
	var re *MirrorRecordError
	if !errors.Is(err, ErrMirrorForeignRecord) || !errors.As(err, &re) || re.Seq != 6 || !strings.Contains(re.Reason, "duplicate acknowledgement") {
		t.Fatalf("mirror of seq 6 after a forged seq 6: %v", err)
	}
	st := x.store.Stats()
	if st.MirrorForeign == 0 || st.MirrorFailure != "nats_mirror_foreign_record" || st.MirroredEvents != uint64(x.mirroredBeforeTheForger) || st.MirrorDuplicates != 0 {
		t.Fatalf("stats after a foreign duplicate ack: %+v", st)
	}
	if !errors.Is(x.store.MirrorHealth(), ErrMirrorForeignRecord) {
		t.Fatalf("health: %v", x.store.MirrorHealth())
	}
	// It stays failed: the forged record is the stream's tail now.
	if err := x.store.Mirror(x.evs[5:8]); !errors.Is(err, ErrMirrorForeignRecord) || !errors.As(err, &re) || re.Seq != 6 {
		t.Fatalf("next mirror call: %v", err)
	}
	if x.store.Stats().MirrorFailure != "nats_mirror_foreign_record" {
		t.Fatal("the failure was cleared")
	}
}

func TestRepro10_ListenerClientsCannotPublishEventsOrConflicts(t *testing.T) {
	b := startBus(t, Config{Store: "perm", Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Mirror: MirrorConfig{Enabled: true}})
	if err := b.Mirror(sampleEvents(1, 2)); err != nil {
		t.Fatal(err)
	}
	conflicts := make(chan ConflictNotification, 4)
	stop, err := b.SubscribeConflicts(func(n ConflictNotification) { conflicts <- n })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	wake, err := b.SubscribeWake(WakeKindPoll)
	if err != nil {
		t.Fatal(err)
	}
	defer wake.Stop()
	denied := make(chan error, 8)
	nc := tcpConn(t, b.ListenURL(), seedOpt(t, b.cfg.ListenAuth.SeedFile),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { denied <- err }))

	forged := `{"schema":2,"kind":"` + string(events.TypeConflictOpened) + `","store":"perm","conflict_id":"forged","entity":"A","id":"1","field":"f","at":"2026-11-30T02:34:22Z"}`
	for _, subject := range []string{b.Subject(SuffixConflictOpened), b.Subject(SuffixEvents)} {
		if err := nc.Publish(subject, []byte(forged)); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, denied, "permissions violation"); !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("publish on %s: %v", subject, err)
		}
	}
	if err := b.PublishConflictOpened(ConflictNotification{ConflictID: "real", Entity: "A", ID: "1", Field: "f"}); err != nil {
		t.Fatal(err)
	}
	if n := recv(t, conflicts, "the real notification"); n.ConflictID != "real" {
		t.Fatalf("subscriber got %+v", n)
	}
	if err := nc.PublishRequest("$JS.API.STREAM.DELETE.HIKOUTEI_PERM", nats.NewInbox(), nil); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, denied, "permissions violation"); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("stream delete: %v", err)
	}
	if got, err := readAll(t, clientCfg(b), "HIKOUTEI_PERM"); err != nil || len(got) != 2 {
		t.Fatalf("mirror after the attempts: %d events, %v", len(got), err)
	}
	if err := nc.Publish(b.Subject(SuffixWakePoll), nil); err != nil { // hints stay allowed
		t.Fatal(err)
	}
	recv(t, wake.C, "a client's wake-up hint")
}

func TestRepro10_NonLoopbackBindWithoutAuthIsRefused(t *testing.T) {
	for name, cfg := range map[string]Config{
		"all interfaces, none":     {Store: "s", Listen: "0.0.0.0:0", ListenAuth: ListenAuth{None: true}},
		"ipv6 any, none":           {Store: "s", Listen: "[::]:0", ListenAuth: ListenAuth{None: true}},
		"routable address, none":   {Store: "s", Listen: "192.0.2.1:0", ListenAuth: ListenAuth{None: true}},
		"hostname, none":           {Store: "s", Listen: "example.com:0", ListenAuth: ListenAuth{None: true}},
		"all interfaces, no auth":  {Store: "s", Listen: "0.0.0.0:0"},
		"loopback, nothing chosen": {Store: "s", Listen: "127.0.0.1:0"},
	} {
		b, err := Start(t.Context(), cfg)
		if !errors.Is(err, ErrListenUnauthenticated) || err.Error() == "" || !strings.HasPrefix(err.Error(), "nats_listen_unauthenticated") {
			if b != nil {
				b.Close()
			}
			t.Fatalf("%s: %v, want nats_listen_unauthenticated", name, err)
		}
	}
	if _, err := Start(t.Context(), Config{Store: "s", Listen: "127.0.0.1:0", ListenAuth: ListenAuth{None: true, Nkeys: []string{"Unot"}}}); !errors.Is(err, ErrConfigInvalid) {
		t.Fatalf("None with keys: %v", err)
	}
	// Loopback without authentication is allowed, and says so.
	var logs bytes.Buffer
	b := startBus(t, Config{Store: "lo", Listen: "127.0.0.1:0", ListenAuth: ListenAuth{None: true},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if b.ListenMode() != ListenLoopbackOnly || !strings.Contains(logs.String(), `"auth":"loopback-only"`) || !strings.Contains(logs.String(), b.ListenURL()) {
		t.Fatalf("mode %s, log %s", b.ListenMode(), logs.String())
	}
	tcpConn(t, b.ListenURL())
}

func TestRepro10_GeneratedCredentialsFilesAre0600(t *testing.T) {
	dir := t.TempDir()
	seed, key := filepath.Join(dir, "client.nk"), filepath.Join(dir, "mirror.nk")
	var logs bytes.Buffer
	cfg := Config{Store: "creds", Listen: "127.0.0.1:0", ListenAuth: ListenAuth{SeedFile: seed},
		StoreDir: filepath.Join(dir, "js"), Mirror: MirrorConfig{Enabled: true, SigningKeyFile: key},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	b := startBus(t, cfg)
	if !strings.Contains(logs.String(), `"auth":"authenticated"`) {
		t.Fatalf("listening log line: %s", logs.String())
	}
	for _, f := range []string{seed, key} {
		st, err := os.Lstat(f)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v", f, st.Mode(), err)
		}
		secret, _ := os.ReadFile(f)
		if strings.Contains(logs.String(), strings.TrimSpace(string(secret))) {
			t.Fatalf("%s: the seed was logged", f)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 { // no temporary file left behind
		t.Fatalf("dir holds %v", entries)
	}
	client, mirror := b.ClientKey(), b.MirrorKey()
	if !nkeys.IsValidPublicUserKey(client) || !nkeys.IsValidPublicServerKey(mirror) {
		t.Fatalf("keys %q %q", client, mirror)
	}
	b.Close()
	again := startBus(t, cfg) // kept, never replaced
	if again.ClientKey() != client || again.MirrorKey() != mirror {
		t.Fatal("a restart replaced the credentials")
	}
	again.Close()

	if err := os.Chmod(seed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(t.Context(), cfg); !errors.Is(err, ErrCredentialsFile) {
		t.Fatalf("group-readable seed: %v", err)
	}
	os.Rename(seed, seed+".real")
	os.Chmod(seed+".real", 0o600)
	if err := os.Symlink(seed+".real", seed); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(t.Context(), cfg); !errors.Is(err, ErrCredentialsFile) {
		t.Fatalf("symlinked seed: %v", err)
	}
	if _, err := readSeed(filepath.Join(dir, "missing.nk"), nkeys.PrefixByteUser); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing seed: %v", err)
	}
}
