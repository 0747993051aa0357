package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Config configures Listen.
type Config struct {
	// Mux dispatches the requests (required).
	Mux *Mux
	// Codes are the sentinel errors (text = code) a handler's error is
	// matched against (errors.Is) to fill Response.Code and Response.Codes
	// (every match travels, so the client's error matches the same
	// sentinels); an error matching none answers admin_handler_failed.
	Codes []error
	// IOTimeout bounds reading the request and writing the response
	// (default 10 s); a slower client gets admin_request_timeout.
	IOTimeout time.Duration
	// HandlerTimeout bounds one handler (default 1 min).
	HandlerTimeout time.Duration
	// MaxConns caps the connections served at once (default
	// DefaultMaxConns): one past it is answered admin_busy at once and
	// closed, so a burst of clients never holds more descriptors than
	// that.
	MaxConns int
}

// DefaultMaxConns is Config.MaxConns's default.
const DefaultMaxConns = 32

// Accept retry backoff (as net/http's Server): from acceptBackoffMin,
// doubling, at most acceptBackoffMax between tries.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// Server serves the channel of one store until Close.
type Server struct {
	cfg     Config
	path    string
	ln      *net.UnixListener
	info    os.FileInfo // the socket file this server created
	uid     int         // the uid peers must have
	mu      sync.Mutex
	closing bool
	active  int // connections being served
	wg      sync.WaitGroup
	// acceptErr is why accepting fails now (nil: it does not), since
	// acceptSince; see AcceptErr.
	acceptErr   error
	acceptSince time.Time
	stopped     chan struct{} // closed by Close: ends an accept backoff
}

// SocketPath is the channel's socket in store directory dir.
func SocketPath(dir string) string { return dir + string(os.PathSeparator) + SocketName }

// SocketName is the socket's file name inside the store directory.
const SocketName = "admin.sock"

// Listen creates the socket of store directory dir and serves it. The
// caller must hold the store's writer lease. A socket left by a dead
// process (nobody answers) is replaced; a live one is never removed
// (ErrSocketInUse). The socket is bound under a temporary name, set to
// mode 0600 and renamed into place, so it never exists with a wider mode.
func Listen(dir string, cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, path: SocketPath(dir), uid: os.Getuid(), stopped: make(chan struct{})}
	s.cfg.IOTimeout = cmp.Or(cfg.IOTimeout, 10*time.Second)
	s.cfg.HandlerTimeout = cmp.Or(cfg.HandlerTimeout, time.Minute)
	s.cfg.MaxConns = cmp.Or(cfg.MaxConns, DefaultMaxConns)
	s.cfg.Codes = append(append([]error(nil), codes...), cfg.Codes...)
	if err := checkStale(s.path); err != nil {
		return nil, err
	}
	ln, info, err := bindPrivate(dir, s.path)
	if err != nil {
		return nil, err
	}
	s.ln, s.info = ln, info
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// checkStale refuses a live socket at path; a missing or dead one is fine.
func checkStale(path string) error {
	c, err := dialPath(path, time.Second)
	switch {
	case err == nil:
		c.Close()
		return fmt.Errorf("%w: %s answers", ErrSocketInUse, path)
	case errors.Is(err, ErrUnavailable):
		return nil
	}
	return fmt.Errorf("%w: %w", ErrListen, err)
}

// bindPrivate binds a socket under a temporary name, makes it 0600 and
// renames it to path.
func bindPrivate(dir, path string) (*net.UnixListener, os.FileInfo, error) {
	removeTempSockets(dir)
	tmp := filepath.Join(dir, fmt.Sprintf(".admin-%d.sock", os.Getpid()))
	ln, err := listenPath(tmp)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrListen, err)
	}
	ln.SetUnlinkOnClose(false)
	err = os.Chmod(tmp, 0o600)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	var info os.FileInfo
	if err == nil {
		info, err = os.Lstat(path)
	}
	if err != nil {
		ln.Close()
		_ = os.Remove(tmp)
		return nil, nil, fmt.Errorf("%w: %w", ErrListen, err)
	}
	return ln, info, nil
}

// removeTempSockets removes the temporary sockets of earlier holders
// killed while binding: only the lease holder binds, so none is live.
func removeTempSockets(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".admin-") && strings.HasSuffix(e.Name(), ".sock") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// acceptLoop accepts until Close. A failing Accept (too many open files
// in the process or the system, a connection aborted, no buffer space)
// never ends it: it tries again after a backoff, as net/http's Server
// does, and AcceptErr reports the failure until an Accept succeeds.
func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if s.isClosing() || errors.Is(err, net.ErrClosed) {
				return // Close waits for the connections
			}
			backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
			s.setAcceptErr(err)
			select {
			case <-s.stopped:
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		s.setAcceptErr(nil)
		switch s.track(1) {
		case admitClosing:
			c.Close()
		case admitBusy:
			s.wg.Add(1)
			go s.refuseBusy(c)
		default:
			s.wg.Add(1)
			go s.serveConn(c)
		}
	}
}

func (s *Server) setAcceptErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.acceptErr = nil
	case s.acceptErr == nil:
		s.acceptErr, s.acceptSince = err, time.Now()
	default:
		s.acceptErr = err
	}
}

// AcceptErr is why the channel cannot accept connections now
// (ErrAcceptFailed wrapping the cause, e.g. too many open files, and
// since when), or nil when the last Accept succeeded. The channel keeps
// trying and recovers by itself once the resource is back.
func (s *Server) AcceptErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.acceptErr == nil {
		return nil
	}
	return fmt.Errorf("%w: since %s: %w", ErrAcceptFailed, s.acceptSince.UTC().Format(time.RFC3339), s.acceptErr)
}

// Outcomes of track(1).
const (
	admitServe   = iota // serve the connection
	admitBusy           // past MaxConns: answer admin_busy
	admitClosing        // Close began: drop it
)

// track(1) admits a new connection (counting it when served); track(-1)
// ends one.
func (s *Server) track(d int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case d > 0 && s.closing:
		return admitClosing
	case d > 0 && s.active >= s.cfg.MaxConns:
		return admitBusy
	}
	s.active += d
	return admitServe
}

// refuseBusy answers admin_busy on c without reading the request, and
// closes it.
func (s *Server) refuseBusy(c *net.UnixConn) {
	defer s.wg.Done()
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(s.cfg.IOTimeout))
	_ = json.NewEncoder(c).Encode(s.response(nil, fmt.Errorf("%w: %d requests are being served; try again", ErrBusy, s.cfg.MaxConns)))
}

func (s *Server) peerUID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uid
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// serveConn answers one request on c and closes it.
func (s *Server) serveConn(c *net.UnixConn) {
	defer s.wg.Done()
	defer s.track(-1)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(s.cfg.IOTimeout))
	body, err := s.answer(c)
	_ = c.SetDeadline(time.Now().Add(s.cfg.IOTimeout))
	_ = json.NewEncoder(c).Encode(s.response(body, err))
}

// answer checks the peer, reads and runs the request.
func (s *Server) answer(c *net.UnixConn) (any, error) {
	if err := checkPeer(c, s.peerUID()); err != nil {
		return nil, err
	}
	raw, err := readRequest(c)
	if err != nil {
		return nil, err
	}
	req, err := DecodeRequest(raw)
	if err != nil {
		return nil, err
	}
	if s.isClosing() {
		return nil, fmt.Errorf("%w: request %q not run", ErrStoreClosing, req.Op)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.HandlerTimeout)
	defer cancel()
	return s.cfg.Mux.dispatch(ctx, req)
}

// response builds the envelope for a handler's result.
func (s *Server) response(body any, err error) Response {
	r := Response{Version: Version, OK: err == nil}
	if body != nil {
		if b, merr := json.Marshal(body); merr == nil {
			r.Body = b
		}
	}
	if err != nil {
		r.Codes, r.Message = s.codes(err), err.Error()
		r.Code = r.Codes[0]
	}
	return r
}

// codes are the registered sentinels err matches, the one its message
// starts with first (its own code; the others are codes it also matches),
// or admin_handler_failed alone when none matches.
func (s *Server) codes(err error) []string {
	var out []string
	msg := err.Error()
	for _, c := range s.cfg.Codes {
		code := c.Error()
		if !errors.Is(err, c) || slices.Contains(out, code) {
			continue
		}
		if leads(msg, code) {
			out = append([]string{code}, out...)
		} else {
			out = append(out, code)
		}
	}
	if len(out) == 0 {
		return []string{ErrHandlerFailed.Error()}
	}
	return out
}

// leads reports whether msg is code, or code followed by ": ".
func leads(msg, code string) bool {
	rest, ok := strings.CutPrefix(msg, code)
	return ok && (rest == "" || strings.HasPrefix(rest, ": "))
}

// readRequest reads up to a newline or the end of the client's half,
// at most MaxRequestBytes.
func readRequest(r io.Reader) ([]byte, error) {
	buf := make([]byte, 0, 512)
	chunk := make([]byte, 4096)
	for {
		n, err := r.Read(chunk)
		for i := range n {
			if chunk[i] == '\n' {
				return checkSize(append(buf, chunk[:i]...))
			}
		}
		buf = append(buf, chunk[:n]...)
		if len(buf) > MaxRequestBytes {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrRequestTooLarge, MaxRequestBytes)
		}
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("%w: no complete request in time", ErrRequestTimeout)
		case err != nil:
			return nil, fmt.Errorf("%w: %w", ErrMalformedRequest, err)
		}
	}
}

func checkSize(b []byte) ([]byte, error) {
	if len(b) > MaxRequestBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrRequestTooLarge, MaxRequestBytes)
	}
	return b, nil
}

// Close stops accepting, lets the requests being run finish (a request
// read after Close began answers store_closing), and removes the socket
// file if it is still the one this server created. Safe to call twice.
func (s *Server) Close() error {
	s.mu.Lock()
	already := s.closing
	s.closing = true
	s.mu.Unlock()
	if already {
		return nil
	}
	close(s.stopped)
	err := s.ln.Close()
	s.wg.Wait()
	if cur, serr := os.Lstat(s.path); serr == nil && os.SameFile(cur, s.info) {
		err = errors.Join(err, os.Remove(s.path))
	}
	return err
}
