package natsbus

import (
	"fmt"
	"net"
	"strings"

	"github.com/nats-io/nkeys"
)

// ListenAuth says who may connect to the embedded server's listener
// (Config.Listen). A listener always requires authentication unless None
// is set, which is allowed on a loopback address only. Clients
// authenticate with an nkey (challenge-response: no secret crosses the
// network) and get the client permissions (README "NATS trust model"):
// they may subscribe to the store's subjects, publish wake-up hints and
// read the mirror stream, but never publish events or conflict
// notifications, which only the store's own in-process connection may.
type ListenAuth struct {
	// SeedFile holds the generated client credentials: one nkey user seed
	// ("SU…", the file format of `nats --nkey FILE`, nats.NkeyOptionFromSeed
	// and `hikoutei audit/poll --nats-nkey FILE`). Start creates it when
	// missing (mode 0600, atomically, never replacing a file) and refuses
	// one that is not a regular file or is accessible by group or others.
	// Delete it and restart to rotate the credentials.
	SeedFile string
	// Nkeys are public user nkeys ("U…") supplied by the operator that may
	// connect; their seeds stay with the clients.
	Nkeys []string
	// None turns authentication off: allowed only when Listen's host is a
	// loopback address ("localhost", 127.0.0.0/8, ::1). Any local process
	// may then connect with full rights.
	None bool
}

// ListenMode says how a listener is protected.
type ListenMode string

// Listen modes (Bus.ListenMode).
const (
	// ListenOff: no listener (in-process only, or connected to Config.URL).
	ListenOff ListenMode = "off"
	// ListenAuthenticated: every client authenticates with an nkey.
	ListenAuthenticated ListenMode = "authenticated"
	// ListenLoopbackOnly: no authentication, bound to a loopback address.
	ListenLoopbackOnly ListenMode = "loopback-only"
)

// isLoopback reports whether host names only this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// CheckListen validates a Config.Listen address and its ListenAuth without
// starting anything, so a caller can refuse a configuration before taking
// locks. Errors: ErrConfigInvalid, ErrListenUnauthenticated.
func CheckListen(listen string, auth ListenAuth) error {
	host, _, err := splitListen(listen)
	if err != nil {
		return err
	}
	return auth.check(listen, host)
}

// check validates ListenAuth for a listener on host.
// Errors: ErrListenUnauthenticated, ErrConfigInvalid.
func (a ListenAuth) check(listen, host string) error {
	for _, k := range a.Nkeys {
		if !nkeys.IsValidPublicUserKey(k) {
			return fmt.Errorf("%w: ListenAuth.Nkeys: %q is not a public user nkey (U…)", ErrConfigInvalid, k)
		}
	}
	switch {
	case a.None && (a.SeedFile != "" || len(a.Nkeys) > 0):
		return fmt.Errorf("%w: ListenAuth.None excludes SeedFile and Nkeys", ErrConfigInvalid)
	case a.None && !isLoopback(host):
		return fmt.Errorf("%w: listener %s is not a loopback address: it needs authentication (ListenAuth.SeedFile or Nkeys)", ErrListenUnauthenticated, listen)
	case !a.None && a.SeedFile == "" && len(a.Nkeys) == 0:
		return fmt.Errorf("%w: listener %s has no authentication configured (ListenAuth.SeedFile or Nkeys; None on loopback only)", ErrListenUnauthenticated, listen)
	}
	return nil
}

// listenUsers returns the embedded server's users: the store's own
// in-process connection (selfKey, full rights, in-process only) and the
// clients' keys with the client permissions.
func listenUsers(cfg Config, selfKey string, clientKeys []string) []ServerUser {
	users := []ServerUser{{Nkey: selfKey, InProcessOnly: true}}
	perms := clientPermissions(cfg)
	for _, k := range clientKeys {
		users = append(users, ServerUser{Nkey: k, Permissions: perms})
	}
	return users
}

// clientPermissions lets a listener's client subscribe to the store's
// subjects and its own inbox, publish wake-up hints, and use the
// JetStream API read-only on the mirror stream (stream info, message get,
// ephemeral consumers). Everything else is denied, in particular
// publishing events or conflict notifications and changing the stream.
// A consumer's deliver subject is in its request's body, which subject
// permissions cannot see: the mirror stream's own subjects guard the
// store's (streamSubjects), so the server refuses a push consumer
// delivering into them.
func clientPermissions(cfg Config) *ServerPermissions {
	st := cfg.Mirror.Stream
	return &ServerPermissions{
		Publish: []string{
			SubjectFor(cfg.Store, SuffixWakeDispatch), SubjectFor(cfg.Store, SuffixWakePoll),
			"$JS.API.INFO",
			"$JS.API.STREAM.INFO." + st,
			"$JS.API.STREAM.MSG.GET." + st,
			"$JS.API.DIRECT.GET." + st, "$JS.API.DIRECT.GET." + st + ".>",
			"$JS.API.CONSUMER.CREATE." + st, "$JS.API.CONSUMER.CREATE." + st + ".>",
			"$JS.API.CONSUMER.INFO." + st + ".>", "$JS.API.CONSUMER.DELETE." + st + ".>",
			"$JS.API.CONSUMER.MSG.NEXT." + st + ".>",
			"$JS.ACK." + st + ".>", "$JS.FC." + st + ".>",
		},
		Subscribe: []string{
			SubjectPrefix + "." + cfg.Store + ".>", "_INBOX.>",
		},
	}
}
