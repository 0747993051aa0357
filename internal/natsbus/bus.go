package natsbus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// Subject suffixes under "hikoutei.<store>.". Use SubjectFor or Bus.Subject
// to build a full subject.
const (
	// SubjectPrefix is the first token of every subject of this package.
	SubjectPrefix = "hikoutei"
	// SuffixWakeDispatch: wake-up hint for the dispatcher (empty body).
	SuffixWakeDispatch = "wake.dispatch"
	// SuffixWakePoll: wake-up hint for the pollers (empty body).
	SuffixWakePoll = "wake.poll"
	// SuffixConflictOpened: JSON ConflictNotification, kind "conflict.opened".
	SuffixConflictOpened = string(events.TypeConflictOpened)
	// SuffixConflictResolved: JSON ConflictNotification, kind "conflict.resolved".
	SuffixConflictResolved = string(events.TypeConflictResolved)
	// SuffixEvents: default subject of the JetStream event mirror (body =
	// events.MarshalRecord bytes, header Nats-Msg-Id = decimal log seq).
	SuffixEvents = "events"
)

// SubjectFor returns "hikoutei.<store>.<suffix>", e.g.
// SubjectFor("demo", SuffixWakeDispatch) = "hikoutei.demo.wake.dispatch".
// store is not validated here (see ValidateStore).
func SubjectFor(store, suffix string) string {
	return SubjectPrefix + "." + store + "." + suffix
}

// Bus is the store's NATS layer: wake-up hints, conflict notifications and
// the optional JetStream event mirror, over one connection to an embedded or
// external server. All methods are safe for concurrent use. Hint and
// notification publishers never block on the network and never return a
// network error; see Stats for what was dropped.
type Bus struct {
	cfg Config
	srv Server // nil when connected to Config.URL
	nc  *nats.Conn

	wake     [2]chan struct{} // indexed by WakeKind.index()
	notify   chan outMsg
	done     chan struct{}
	closed   atomic.Bool
	closeMu  sync.Mutex
	wg       sync.WaitGroup
	ncClosed chan struct{}

	self       nkeys.KeyPair // the in-process connection's key when listening with auth
	listenMode ListenMode
	clientKey  string        // public key of ListenAuth.SeedFile ("" without)
	signer     nkeys.KeyPair // mirror signing key (Mirror.Enabled)
	signerKey  string

	mirrorMu sync.Mutex
	js       jetstream.JetStream
	streamOK bool
	tail     mirrorTail
	// mirrored is the log seq of the last record the mirror stream is
	// known to hold (MirroredHead), read without mirrorMu.
	mirrored atomic.Uint64
	holes    atomic.Pointer[events.SeqRanges] // SetLogHoles

	st counters
}

type outMsg struct {
	subject string
	data    []byte
}

type counters struct {
	wakesRequested, wakesCoalesced, wakesPublished, wakesDropped atomic.Uint64
	notifPublished, notifBuffered, notifDropped                  atomic.Uint64
	mirrored, mirrorDuplicates, mirrorForeign                    atomic.Uint64
	disconnects, reconnects                                      atomic.Uint64

	mirrorFailMu sync.Mutex
	mirrorFail   error // the last Mirror call's error (nil after a success)
}

// Stats is a snapshot of the Bus's counters (all counts since Start).
type Stats struct {
	WakesRequested uint64 // WakeDispatch/WakePoll calls
	WakesCoalesced uint64 // calls absorbed by a pending or in-flight hint
	WakesPublished uint64 // wake messages handed to the connection
	WakesDropped   uint64 // wake messages not sent (not connected, closed, error)

	NotificationsPublished uint64 // conflict notifications written to a live connection
	NotificationsBuffered  uint64 // written to the reconnect buffer (sent if the reconnect succeeds before Close)
	NotificationsDropped   uint64 // queue full, reconnect buffer full, connection closed, Bus closed

	MirroredEvents   uint64 // events acknowledged by the mirror stream as new
	MirrorDuplicates uint64 // duplicate acks for a record the stream already held from this store (same bytes)
	MirrorForeign    uint64 // records found in the stream that this store did not write (ErrMirrorForeignRecord)
	// MirrorFailure is the stable code of the last Mirror call's error
	// ("" after a success), e.g. "nats_mirror_foreign_record".
	MirrorFailure string

	Disconnects uint64 // connection losses observed
	Reconnects  uint64 // successful reconnects
	Connected   bool   // connection established right now
}

// Start starts the Bus: the embedded server unless cfg.URL is set, then the
// client connection and the publisher goroutines. ctx bounds only Start
// itself (besides cfg.ConnectTimeout); the Bus lives until Close.
// Errors: ErrConfigInvalid, ErrListenUnauthenticated, ErrCredentialsFile,
// ErrServerStartFailed, ErrConnectFailed, or ctx.Err(). With a listener it
// logs "nats listening" with its URL and auth mode (never a secret).
func Start(ctx context.Context, cfg Config) (*Bus, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := &Bus{
		cfg:      cfg,
		notify:   make(chan outMsg, cfg.NotifyQueue),
		done:     make(chan struct{}),
		ncClosed: make(chan struct{}),
	}
	for i := range b.wake {
		b.wake[i] = make(chan struct{}, 1)
	}
	if err := b.loadKeys(); err != nil {
		return nil, err
	}
	if cfg.URL == "" {
		if b.srv, err = startEmbedded(cfg, b.users()); err != nil {
			return nil, err
		}
	}
	if err := b.connect(ctx); err != nil {
		if b.srv != nil {
			b.srv.Shutdown()
		}
		return nil, err
	}
	if b.listenMode != ListenOff {
		cfg.Logger.Info("nats listening", "store", cfg.Store, "url", b.ListenURL(), "auth", string(b.listenMode))
	}
	b.wg.Add(3)
	go b.wakeLoop(WakeKindDispatch)
	go b.wakeLoop(WakeKindPoll)
	go b.notifyLoop()
	return b, nil
}

// loadKeys loads or creates the listener's client seed and the mirror
// signing key, and makes the in-process connection's key when the
// listener requires authentication.
func (b *Bus) loadKeys() error {
	cfg := b.cfg
	b.listenMode = ListenOff
	if cfg.URL == "" && cfg.Listen != "" {
		b.listenMode = ListenLoopbackOnly
		if !cfg.ListenAuth.None {
			b.listenMode = ListenAuthenticated
			self, err := nkeys.CreateUser()
			if err != nil {
				return fmt.Errorf("%w: in-process key: %v", ErrServerStartFailed, err)
			}
			b.self = self
		}
		if f := cfg.ListenAuth.SeedFile; f != "" {
			kp, _, err := loadOrCreateSeed(f, nkeys.PrefixByteUser)
			if err != nil {
				return err
			}
			b.clientKey, _ = kp.PublicKey()
			kp.Wipe()
		}
	}
	if cfg.Mirror.Enabled {
		kp, _, err := loadOrCreateSeed(cfg.Mirror.SigningKeyFile, nkeys.PrefixByteServer)
		if err != nil {
			return err
		}
		b.signer = kp
		b.signerKey, _ = kp.PublicKey()
	}
	return nil
}

// users returns the listener's nkey users (nil: no authentication).
func (b *Bus) users() []ServerUser {
	if b.self == nil {
		return nil
	}
	selfKey, _ := b.self.PublicKey()
	keys := slices.Clone(b.cfg.ListenAuth.Nkeys)
	if b.clientKey != "" {
		keys = append(keys, b.clientKey)
	}
	return listenUsers(b.cfg, selfKey, keys)
}

func (b *Bus) connect(ctx context.Context) error {
	cfg := b.cfg
	log := cfg.Logger
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.Timeout(cfg.ConnectTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(cfg.ReconnectWait),
		nats.ReconnectBufSize(cfg.ReconnectBufSize),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			b.st.disconnects.Add(1)
			if err != nil { // nil: our own Close, not worth a warning
				log.Warn("nats disconnected", "store", cfg.Store, "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			b.st.reconnects.Add(1)
			log.Info("nats reconnected", "store", cfg.Store, "url", nc.ConnectedUrlRedacted())
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(b.ncClosed) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subj := ""
			if sub != nil {
				subj = sub.Subject
			}
			log.Warn("nats async error", "store", cfg.Store, "subject", subj, "err", err)
		}),
	}
	url := cfg.URL
	if b.srv != nil {
		opts = append(opts, nats.InProcessServer(b.srv))
		url = b.srv.ClientURL() // ignored by the in-process dialer
		if b.self != nil {
			pub, _ := b.self.PublicKey()
			opts = append(opts, nats.Nkey(pub, b.self.Sign))
		}
	} else {
		if cfg.CredsFile != "" {
			opts = append(opts, nats.UserCredentials(cfg.CredsFile))
		}
		if cfg.NkeyFile != "" {
			o, err := nats.NkeyOptionFromSeed(cfg.NkeyFile)
			if err != nil {
				return fmt.Errorf("%w: NkeyFile %s: not a user nkey seed", ErrConfigInvalid, cfg.NkeyFile)
			}
			opts = append(opts, o)
		}
		if cfg.TLSCAFile != "" {
			opts = append(opts, nats.RootCAs(cfg.TLSCAFile))
		}
		if cfg.TLSCertFile != "" {
			opts = append(opts, nats.ClientCert(cfg.TLSCertFile, cfg.TLSKeyFile))
		}
		if cfg.RetryOnFailedConnect {
			opts = append(opts, nats.RetryOnFailedConnect(true))
		}
	}
	type result struct {
		nc  *nats.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(url, opts...)
		ch <- result{nc, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%w: %s: %v", ErrConnectFailed, redact(cfg.URL), r.err)
		}
		b.nc = r.nc
		return nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.nc != nil {
				r.nc.Close()
			}
		}()
		return ctx.Err()
	}
}

// redact names the target without credentials embedded in the URL.
func redact(url string) string {
	if url == "" {
		return "embedded server"
	}
	parts := strings.Split(url, ",")
	for i, part := range parts {
		if at, s := strings.LastIndexByte(part, '@'), strings.Index(part, "://"); at >= 0 && s >= 0 && s < at {
			parts[i] = part[:s+3] + "***@" + part[at+1:]
		}
	}
	return strings.Join(parts, ",")
}

// Subject returns "hikoutei.<store>.<suffix>" for this Bus's store.
func (b *Bus) Subject(suffix string) string { return SubjectFor(b.cfg.Store, suffix) }

// Store returns the validated store name used in subjects.
func (b *Bus) Store() string { return b.cfg.Store }

// Embedded reports whether the Bus runs its own in-process server.
func (b *Bus) Embedded() bool { return b.srv != nil }

// ListenURL returns "nats://host:port" of the embedded server's listener
// (the actual port when Config.Listen asked for port 0), or "" when there is
// no listener (no Listen, or connected to Config.URL).
func (b *Bus) ListenURL() string {
	if b.srv == nil || b.cfg.Listen == "" {
		return ""
	}
	addr, ok := b.srv.Addr().(*net.TCPAddr)
	if !ok || addr == nil {
		return ""
	}
	host, _, _ := splitListen(b.cfg.Listen)
	return "nats://" + net.JoinHostPort(host, strconv.Itoa(addr.Port))
}

// ListenMode says how the listener is protected: ListenOff (no listener),
// ListenAuthenticated or ListenLoopbackOnly.
func (b *Bus) ListenMode() ListenMode { return b.listenMode }

// ClientKey returns the public nkey ("U…") of ListenAuth.SeedFile, or ""
// when no seed file is configured. It is not a secret.
func (b *Bus) ClientKey() string { return b.clientKey }

// MirrorKey returns the public mirror signing key ("N…") readers pin
// (MirrorConfig.VerifyKey, `hikoutei audit --mirror-key`), or "" when the
// mirror is off. It is not a secret.
func (b *Bus) MirrorKey() string { return b.signerKey }

// MirrorStream returns the mirror's JetStream stream name ("" when the
// mirror is off).
func (b *Bus) MirrorStream() string {
	if !b.cfg.Mirror.Enabled {
		return ""
	}
	return b.cfg.Mirror.Stream
}

// Connected reports whether the connection is established right now.
func (b *Bus) Connected() bool { return b.nc.Status() == nats.CONNECTED }

// Stats returns a snapshot of the counters.
func (b *Bus) Stats() Stats {
	return Stats{
		WakesRequested:         b.st.wakesRequested.Load(),
		WakesCoalesced:         b.st.wakesCoalesced.Load(),
		WakesPublished:         b.st.wakesPublished.Load(),
		WakesDropped:           b.st.wakesDropped.Load(),
		NotificationsPublished: b.st.notifPublished.Load(),
		NotificationsBuffered:  b.st.notifBuffered.Load(),
		NotificationsDropped:   b.st.notifDropped.Load(),
		MirroredEvents:         b.st.mirrored.Load(),
		MirrorDuplicates:       b.st.mirrorDuplicates.Load(),
		MirrorForeign:          b.st.mirrorForeign.Load(),
		MirrorFailure:          errorCode(b.MirrorHealth()),
		Disconnects:            b.st.disconnects.Load(),
		Reconnects:             b.st.reconnects.Load(),
		Connected:              b.Connected(),
	}
}

// Close stops the publishers (queued notifications are handed to the
// connection first), drains the connection for at most Config.CloseTimeout,
// then shuts the embedded server down. Idempotent; later calls return nil.
// It never blocks longer than about CloseTimeout even when the server is
// unreachable. The returned error is always nil today.
func (b *Bus) Close() error {
	b.closeMu.Lock()
	defer b.closeMu.Unlock()
	if b.closed.Swap(true) {
		return nil
	}
	close(b.done)
	b.wg.Wait()
	if err := b.nc.Drain(); err == nil {
		t := time.NewTimer(b.cfg.CloseTimeout)
		select {
		case <-b.ncClosed:
		case <-t.C:
		}
		t.Stop()
	} else if !errors.Is(err, nats.ErrConnectionClosed) {
		b.cfg.Logger.Debug("nats drain skipped", "store", b.cfg.Store, "err", err)
	}
	b.nc.Close()
	if b.srv != nil {
		b.srv.Shutdown()
	}
	return nil
}
