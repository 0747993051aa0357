package natsbus

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Defaults applied by Start to zero-valued Config fields.
const (
	DefaultWakeInterval     = 2 * time.Millisecond
	DefaultNotifyQueue      = 1024
	DefaultConnectTimeout   = 5 * time.Second
	DefaultReconnectWait    = time.Second
	DefaultReconnectBufSize = 1 << 20 // bytes
	DefaultCloseTimeout     = 5 * time.Second
	DefaultMirrorTimeout    = 5 * time.Second
	DefaultDuplicateWindow  = 2 * time.Minute
	// EmbeddedMaxPayload is the max_payload (bytes) of the embedded server:
	// the largest event record Mirror can carry when embedded.
	EmbeddedMaxPayload = 8 << 20
	// MaxStoreNameLen bounds Config.Store (characters).
	MaxStoreNameLen = 128
)

// Config configures Start.
//
// Mode: when URL is empty an embedded nats-server runs in-process and the
// Bus connects to it through an in-memory pipe (no port), unless Listen asks
// for a TCP listener so external tools can subscribe (authenticated per
// ListenAuth; the Bus itself stays in-process). When URL is set, the
// Bus connects to that existing server or cluster instead and the embedded
// fields (Listen, StoreDir, JetStream) are ignored, except that Listen
// together with URL is rejected as ambiguous.
type Config struct {
	// Store is the store name used in every subject
	// ("hikoutei.<Store>.wake.dispatch", ...). Required. Allowed characters:
	// ASCII letters, digits, '_' and '-' (a subset of the NATS subject
	// token characters that is also valid in JetStream stream names), at
	// most MaxStoreNameLen characters. SanitizeStore maps any string into
	// that set.
	Store string

	// URL of an existing NATS server or cluster (comma-separated list
	// allowed, e.g. "nats://a:4222,nats://b:4222"); the store passes the
	// env var HIKOUTEI_NATS_URL. Empty = embedded server, started by
	// Server.
	URL string
	// Server starts the embedded server when URL is empty (package
	// natsserver's Embedded; this package does not link nats-server).
	// Nil with an empty URL fails Start with ErrServerNotLinked.
	Server ServerStarter
	// CredsFile is an optional NATS .creds file (JWT + nkey seed) for URL.
	CredsFile string
	// NkeyFile is an optional nkey user seed file for URL, e.g. the
	// ListenAuth.SeedFile of another store's listener.
	NkeyFile string
	// TLSCAFile is an optional PEM file of CAs that verify the server.
	TLSCAFile string
	// TLSCertFile and TLSKeyFile are an optional PEM client certificate and
	// key (both or neither).
	TLSCertFile string
	TLSKeyFile  string
	// RetryOnFailedConnect makes Start succeed while URL is unreachable; the
	// Bus then keeps connecting in the background (hints are dropped until
	// it connects). When false an unreachable URL fails Start with
	// ErrConnectFailed.
	RetryOnFailedConnect bool

	// Listen is an optional "host:port" for the embedded server's client
	// listener (e.g. "127.0.0.1:4222"; port 0 picks a free port, see
	// Bus.ListenURL). Empty = no listener at all (DontListen).
	Listen string
	// ListenAuth says who may connect to the listener; required with
	// Listen (see ListenAuth: a non-loopback address without
	// authentication fails Start with ErrListenUnauthenticated).
	ListenAuth ListenAuth
	// StoreDir is the embedded server's JetStream directory. Required when
	// the embedded server runs JetStream (JetStream or Mirror.Enabled).
	StoreDir string
	// JetStream enables JetStream on the embedded server even when the Bus
	// itself does not mirror (e.g. for other tools). Mirror.Enabled implies it.
	JetStream bool

	// Mirror configures the optional JetStream mirror of committed events.
	Mirror MirrorConfig

	// IncludeValues puts CandidateValue/CanonicalValue into conflict
	// notifications. Off by default: cell values may be personal data.
	IncludeValues bool

	// WakeInterval is the minimum spacing between two wake-up messages on
	// one subject (default DefaultWakeInterval). The first hint after a
	// quiet period is published at once; hints raised meanwhile are
	// coalesced into one trailing message.
	WakeInterval time.Duration
	// NotifyQueue bounds the conflict notifications waiting to be published
	// (default DefaultNotifyQueue); beyond it notifications are dropped and
	// counted.
	NotifyQueue int
	// Name is the client connection name (default "hikoutei-<Store>").
	Name string
	// ConnectTimeout bounds the initial connect and the embedded server's
	// readiness wait (default DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// ReconnectWait is the pause between reconnect attempts (default
	// DefaultReconnectWait). The Bus reconnects forever until Close.
	ReconnectWait time.Duration
	// ReconnectBufSize bounds (bytes) what is buffered for the server while
	// reconnecting (default DefaultReconnectBufSize); notifications beyond
	// it are dropped. Wake hints are never buffered.
	ReconnectBufSize int
	// CloseTimeout bounds how long Close waits for the connection to drain
	// (default DefaultCloseTimeout).
	CloseTimeout time.Duration
	// Logger receives connection state changes (nil = discard).
	Logger *slog.Logger
}

// MirrorConfig configures the JetStream mirror of committed events.
type MirrorConfig struct {
	// Enabled turns Mirror on. When embedded, Config.StoreDir is required.
	Enabled bool
	// Stream is the JetStream stream name (default "HIKOUTEI_" + upper-case
	// Store, '-' kept).
	Stream string
	// Subject is the subject events are published on (default
	// "hikoutei.<Store>.events"). The stream is created with exactly this
	// subject when missing; an existing stream must already capture it.
	Subject string
	// DuplicateWindow is the stream's Nats-Msg-Id dedupe window for a newly
	// created stream (default DefaultDuplicateWindow). Re-publishing an
	// event inside the window stores nothing new; ReadMirror also skips
	// re-published events that fell outside it.
	DuplicateWindow time.Duration
	// Memory selects memory storage for a newly created stream (default file).
	Memory bool
	// Replicas of a newly created stream (default 1; clusters may use 3).
	Replicas int
	// MaxAge and MaxBytes limit a newly created stream (0 = unlimited).
	MaxAge   time.Duration
	MaxBytes int64
	// Timeout bounds one Mirror call, stream creation included (default
	// DefaultMirrorTimeout).
	Timeout time.Duration
	// SigningKeyFile holds the store's mirror signing key: an Ed25519 nkey
	// seed ("SN…"). Required with Enabled; Start creates it when missing
	// (mode 0600, atomically). Every mirrored record is signed with it, so
	// readers can tell the store's records from forged ones; its public
	// key ("N…", Bus.MirrorKey) is what readers pin (VerifyKey).
	SigningKeyFile string
	// VerifyKey is, for readers (ReadMirrorWith), the public mirror key
	// ("N…") every record must be signed with. Empty = the key of the
	// first record read, which detects any record added by someone else
	// but not a stream rewritten as a whole.
	VerifyKey string
}

// SanitizeStore maps name to a valid Config.Store: every character outside
// [A-Za-z0-9_-] becomes '_', an empty result becomes "default", and the
// result is cut to MaxStoreNameLen. Distinct names may map to the same result.
func SanitizeStore(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= MaxStoreNameLen {
			break
		}
		if validStoreRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "default"
	}
	return b.String()
}

func validStoreRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// ValidateStore reports whether name is a valid Config.Store. Errors:
// ErrConfigInvalid.
func ValidateStore(name string) error {
	if name == "" {
		return fmt.Errorf("%w: store name is empty", ErrConfigInvalid)
	}
	if len(name) > MaxStoreNameLen {
		return fmt.Errorf("%w: store name longer than %d characters", ErrConfigInvalid, MaxStoreNameLen)
	}
	for i, r := range name {
		if !validStoreRune(r) {
			return fmt.Errorf("%w: store name %q has %q at byte %d (allowed: A-Z a-z 0-9 _ -)", ErrConfigInvalid, name, r, i)
		}
	}
	return nil
}

// validSubject checks a dotted subject without wildcards or whitespace.
func validSubject(s string) bool {
	if s == "" {
		return false
	}
	for _, tok := range strings.Split(s, ".") {
		if tok == "" || tok == "*" || tok == ">" {
			return false
		}
		for _, r := range tok {
			if r <= ' ' || r == 0x7f || r == '*' || r == '>' {
				return false
			}
		}
	}
	return true
}

func validStreamName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(".*>/\\", r) {
			return false
		}
	}
	return true
}

// normalize validates cfg and fills defaults. Errors: ErrConfigInvalid.
func (cfg Config) normalize() (Config, error) {
	if err := ValidateStore(cfg.Store); err != nil {
		return cfg, err
	}
	if cfg.URL != "" && cfg.Listen != "" {
		return cfg, fmt.Errorf("%w: Listen and URL are exclusive (Listen is for the embedded server)", ErrConfigInvalid)
	}
	if cfg.URL == "" {
		if cfg.CredsFile != "" || cfg.NkeyFile != "" || cfg.TLSCAFile != "" || cfg.TLSCertFile != "" || cfg.TLSKeyFile != "" {
			return cfg, fmt.Errorf("%w: CredsFile/NkeyFile/TLS options need URL (the embedded server is reached in-process)", ErrConfigInvalid)
		}
		if (cfg.JetStream || cfg.Mirror.Enabled) && cfg.StoreDir == "" {
			return cfg, fmt.Errorf("%w: the embedded server's JetStream needs StoreDir", ErrConfigInvalid)
		}
		if cfg.Listen != "" {
			host, _, err := splitListen(cfg.Listen)
			if err != nil {
				return cfg, err
			}
			if err := cfg.ListenAuth.check(cfg.Listen, host); err != nil {
				return cfg, err
			}
		}
	}
	if cfg.Mirror.Enabled && cfg.Mirror.SigningKeyFile == "" {
		return cfg, fmt.Errorf("%w: the mirror needs Mirror.SigningKeyFile", ErrConfigInvalid)
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == "") {
		return cfg, fmt.Errorf("%w: TLSCertFile and TLSKeyFile go together", ErrConfigInvalid)
	}
	for _, f := range []struct{ name, path string }{
		{"CredsFile", cfg.CredsFile}, {"NkeyFile", cfg.NkeyFile}, {"TLSCAFile", cfg.TLSCAFile},
		{"TLSCertFile", cfg.TLSCertFile}, {"TLSKeyFile", cfg.TLSKeyFile},
	} {
		if f.path == "" {
			continue
		}
		if st, err := os.Stat(f.path); err != nil || st.IsDir() {
			return cfg, fmt.Errorf("%w: %s %q is not a readable file", ErrConfigInvalid, f.name, f.path)
		}
	}
	if cfg.WakeInterval < 0 || cfg.NotifyQueue < 0 || cfg.ConnectTimeout < 0 || cfg.ReconnectWait < 0 ||
		cfg.ReconnectBufSize < 0 || cfg.CloseTimeout < 0 || cfg.Mirror.Timeout < 0 ||
		cfg.Mirror.DuplicateWindow < 0 || cfg.Mirror.Replicas < 0 || cfg.Mirror.MaxAge < 0 || cfg.Mirror.MaxBytes < 0 {
		return cfg, fmt.Errorf("%w: negative duration, size or count", ErrConfigInvalid)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.WakeInterval, DefaultWakeInterval)
	def(&cfg.ConnectTimeout, DefaultConnectTimeout)
	def(&cfg.ReconnectWait, DefaultReconnectWait)
	def(&cfg.CloseTimeout, DefaultCloseTimeout)
	def(&cfg.Mirror.Timeout, DefaultMirrorTimeout)
	def(&cfg.Mirror.DuplicateWindow, DefaultDuplicateWindow)
	if cfg.NotifyQueue == 0 {
		cfg.NotifyQueue = DefaultNotifyQueue
	}
	if cfg.ReconnectBufSize == 0 {
		cfg.ReconnectBufSize = DefaultReconnectBufSize
	}
	if cfg.Mirror.Replicas == 0 {
		cfg.Mirror.Replicas = 1
	}
	if cfg.Name == "" {
		cfg.Name = "hikoutei-" + cfg.Store
	}
	if cfg.Mirror.Stream == "" {
		cfg.Mirror.Stream = "HIKOUTEI_" + strings.ToUpper(cfg.Store)
	}
	if cfg.Mirror.Subject == "" {
		cfg.Mirror.Subject = SubjectFor(cfg.Store, SuffixEvents)
	}
	if !validStreamName(cfg.Mirror.Stream) {
		return cfg, fmt.Errorf("%w: mirror stream name %q", ErrConfigInvalid, cfg.Mirror.Stream)
	}
	if !validSubject(cfg.Mirror.Subject) {
		return cfg, fmt.Errorf("%w: mirror subject %q", ErrConfigInvalid, cfg.Mirror.Subject)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

// splitListen parses "host:port" (port 0 = any free port).
func splitListen(s string) (string, int, error) {
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("%w: Listen %q: %v", ErrConfigInvalid, s, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%w: Listen %q: bad port", ErrConfigInvalid, s)
	}
	if host == "" {
		return "", 0, fmt.Errorf("%w: Listen %q: host required (e.g. 127.0.0.1)", ErrConfigInvalid, s)
	}
	return host, port, nil
}
