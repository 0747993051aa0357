package natsbus

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/natsserver"
)

// deadline bounds every wait in these tests.
const deadline = 10 * time.Second

// startBus starts a Bus, giving it a mirror signing key and listener
// credentials in a temporary directory when cfg needs them and names none.
func startBus(t *testing.T, cfg Config) *Bus {
	t.Helper()
	if cfg.Mirror.Enabled && cfg.Mirror.SigningKeyFile == "" {
		cfg.Mirror.SigningKeyFile = filepath.Join(t.TempDir(), "mirror.nk")
	}
	if cfg.Listen != "" && cfg.ListenAuth.SeedFile == "" && len(cfg.ListenAuth.Nkeys) == 0 && !cfg.ListenAuth.None {
		cfg.ListenAuth.SeedFile = filepath.Join(t.TempDir(), "client.nk")
	}
	if cfg.URL == "" && cfg.Server == nil {
		cfg.Server = natsserver.Embedded()
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	b, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// startExternal starts a second embedded server with a loopback TCP
// listener on a free port; it stands in for an external deployment.
func startExternal(t *testing.T, jetStream bool, mutate ...func(*server.Options)) (*server.Server, string) {
	t.Helper()
	opts := &server.Options{
		ServerName: "external",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		NoLog:      true,
		NoSigs:     true,
		JetStream:  jetStream,
		StoreDir:   t.TempDir(),
	}
	for _, f := range mutate {
		f(opts)
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	if !srv.ReadyForConnections(deadline) {
		t.Fatal("external server not ready")
	}
	port := srv.Addr().(*net.TCPAddr).Port
	if port == 0 {
		t.Fatal("no bound port")
	}
	scheme := "nats"
	if opts.TLSConfig != nil {
		scheme = "tls"
	}
	return srv, fmt.Sprintf("%s://127.0.0.1:%d", scheme, port)
}

// rawConn is a plain nats.go client (what an external tool would use).
func rawConn(t *testing.T, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect("", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// inProc connects a plain client to the Bus's embedded server in-process.
func inProc(t *testing.T, b *Bus) *nats.Conn {
	t.Helper()
	return rawConn(t, nats.InProcessServer(b.srv))
}

// clientCfg is how an external tool reaches b's listener: its URL and the
// generated client seed.
func clientCfg(b *Bus) Config {
	return Config{URL: b.ListenURL(), NkeyFile: b.cfg.ListenAuth.SeedFile}
}

// clientConn is a plain TCP client of b's listener with its generated
// credentials.
func clientConn(t *testing.T, b *Bus) *nats.Conn {
	t.Helper()
	o, err := nats.NkeyOptionFromSeed(b.cfg.ListenAuth.SeedFile)
	if err != nil {
		t.Fatal(err)
	}
	return tcpConn(t, b.ListenURL(), o)
}

func tcpConn(t *testing.T, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// recv waits for one value on c, failing the test after deadline.
func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(deadline):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// waitUntil waits for cond (a state with no channel to wait on, e.g. a
// counter or the connection status), failing the test after deadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	end := time.After(deadline)
	for !cond() {
		select {
		case <-tick.C:
		case <-end:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// within runs fn and fails the test if it does not return within d.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s blocked for more than %s", what, d)
	}
}

var t0 = time.Date(2026, 11, 30, 2, 34, 22, 123456789, time.UTC)

// sampleEvents returns stamped events with seqs from..to: entity.persisted
// creates of Airport A<seq>, typed catalogue payloads.
func sampleEvents(from, to uint64) []events.Event {
	var out []events.Event
	for s := from; s <= to; s++ {
		id := fmt.Sprintf("A%d", s)
		out = append(out, events.Event{
			Seq: s, Stream: events.EntityStream("Airport", id), Version: 1,
			At: t0.Add(time.Duration(s) * time.Second), Epoch: 3, Token: "tok", Commit: fmt.Sprintf("c%d", s),
			Payload: events.EntityPersisted{Entity: "Airport", ID: id, Created: true,
				Fields:    map[string]any{"name": fmt.Sprintf("airport %d", s), "n": int64(s)},
				Revisions: map[string]uint64{"name": 1, "n": 1}},
		})
	}
	return out
}

// newMirrorKey is a mirror signing key for records a test writes itself.
func newMirrorKey(t *testing.T) nkeys.KeyPair {
	t.Helper()
	kp, err := nkeys.CreateServer()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// record is e's mirrored form.
func record(t *testing.T, e events.Event) []byte {
	t.Helper()
	b, err := MirrorRecord(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// signedMsg is a mirror message as a publisher holding key writes it
// (id "" = no Nats-Msg-Id).
func signedMsg(t *testing.T, subject, id string, rec []byte, key nkeys.KeyPair) *nats.Msg {
	t.Helper()
	m := nats.NewMsg(subject)
	if id != "" {
		m.Header.Set(jetstream.MsgIDHeader, id)
	}
	sig, err := key.Sign(signedBytes(rec))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := key.PublicKey()
	m.Header.Set(HeaderSigner, pub)
	m.Header.Set(HeaderSignature, base64.RawURLEncoding.EncodeToString(sig))
	m.Data = rec
	return m
}
