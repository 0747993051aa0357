package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/admin"
)

var errNoSuchThing = errors.New("no_such_thing")

// backend is a fake admin.Backend; block, when set, holds Status until closed.
type backend struct {
	entered chan struct{}
	block   chan struct{}
}

func (b *backend) Status(context.Context) (admin.StatusResponse, error) {
	if b.block != nil {
		b.entered <- struct{}{}
		<-b.block
	}
	return admin.StatusResponse{Protocol: admin.Version, PID: 42, Operation: "test"}, nil
}

func (b *backend) ResolveConflict(_ context.Context, r admin.ResolveRequest) (admin.AckResponse, error) {
	return admin.AckResponse{Outcome: "applied:" + r.Resolution}, nil
}

func (b *backend) DismissQuarantine(context.Context, admin.DismissRequest) (admin.DismissResponse, error) {
	return admin.DismissResponse{Queued: true}, nil
}

func (b *backend) AcknowledgeSystem(_ context.Context, r admin.AckRequest) (admin.AckResponse, error) {
	if r.ConflictID != "c1" {
		return admin.AckResponse{Outcome: "rejected"}, errNoSuchThing
	}
	return admin.AckResponse{Outcome: "applied", ReconcileEffect: "fx"}, nil
}

func listen(t *testing.T, dir string, b admin.Backend, tune ...func(*admin.Config)) *admin.Server {
	t.Helper()
	cfg := admin.Config{Mux: admin.NewMux(b), Codes: []error{errNoSuchThing}}
	for _, f := range tune {
		f(&cfg)
	}
	srv, err := admin.Listen(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// raw sends payload on a fresh connection (closing its half) and returns
// the decoded response.
func raw(t *testing.T, dir string, payload []byte) admin.Response {
	t.Helper()
	c, err := net.Dial("unix", admin.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		_, _ = c.Write(payload)
		_ = c.(*net.UnixConn).CloseWrite()
	}()
	return readResp(t, c)
}

func readResp(t *testing.T, r io.Reader) admin.Response {
	t.Helper()
	var resp admin.Response
	if err := json.NewDecoder(r).Decode(&resp); err != nil {
		t.Fatalf("no response: %v", err)
	}
	return resp
}

// eventually waits for cond, yielding between checks.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		runtime.Gosched()
	}
}

func TestSocketIsMode0600ServesTheSameUIDAndIsRemovedAtClose(t *testing.T) {
	dir := t.TempDir()
	srv := listen(t, dir, &backend{})
	fi, err := os.Lstat(admin.SocketPath(dir))
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v mode %v", err, fi.Mode())
	}
	var st admin.StatusResponse
	if err := admin.Call(context.Background(), dir, admin.OpStatus, nil, &st); err != nil || st.PID != 42 || st.Protocol != admin.Version {
		t.Fatalf("status %+v %v", st, err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(admin.SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after Close: %v", err)
	}
	if err := admin.Call(context.Background(), dir, admin.OpStatus, nil, nil); !errors.Is(err, admin.ErrUnavailable) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestOtherUIDPeerIsRejected(t *testing.T) {
	dir := t.TempDir()
	srv := listen(t, dir, &backend{})
	srv.SetPeerUID(os.Getuid() + 1)
	err := admin.Call(context.Background(), dir, admin.OpStatus, nil, nil)
	if !errors.Is(err, admin.ErrPeerRejected) {
		t.Fatalf("another uid's call: %v", err)
	}
}

func TestStaleSocketOfADeadProcessIsReplaced(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: admin.SocketPath(dir), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() // the file stays, nobody listens: a killed process's socket
	if err := admin.Call(context.Background(), dir, admin.OpStatus, nil, nil); !errors.Is(err, admin.ErrUnavailable) {
		t.Fatalf("stale socket: %v", err)
	}
	listen(t, dir, &backend{})
	if err := admin.Call(context.Background(), dir, admin.OpStatus, nil, nil); err != nil {
		t.Fatalf("replaced socket: %v", err)
	}
}

func TestLiveSocketIsNeverRemoved(t *testing.T) {
	dir := t.TempDir()
	listen(t, dir, &backend{})
	if _, err := admin.Listen(dir, admin.Config{Mux: admin.NewMux(&backend{})}); !errors.Is(err, admin.ErrSocketInUse) {
		t.Fatalf("second Listen: %v", err)
	}
	if err := admin.Call(context.Background(), dir, admin.OpStatus, nil, nil); err != nil {
		t.Fatalf("the live socket stopped answering: %v", err)
	}
}

func TestLongStoreDirectoryPathIsReachedThroughItsDescriptor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if len(admin.SocketPath(dir)) <= 108 {
		t.Fatalf("path %d bytes is not long", len(admin.SocketPath(dir)))
	}
	srv := listen(t, dir, &backend{})
	if err := admin.Call(context.Background(), dir, admin.OpStatus, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(admin.SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left: %v", err)
	}
}

func TestHandlerErrorsCarryTheirCodeAndBody(t *testing.T) {
	dir := t.TempDir()
	listen(t, dir, &backend{})
	var res admin.AckResponse
	err := admin.Call(context.Background(), dir, admin.OpConflictAck, admin.AckRequest{ConflictID: "nope"}, &res)
	var re *admin.RemoteError
	if !errors.Is(err, errNoSuchThing) || !errors.As(err, &re) || re.Code != "no_such_thing" || res.Outcome != "rejected" {
		t.Fatalf("err %v res %+v", err, res)
	}
	if err := admin.Call(context.Background(), dir, admin.OpConflictAck, admin.AckRequest{ConflictID: "c1"}, &res); err != nil || res.Outcome != "applied" {
		t.Fatalf("err %v res %+v", err, res)
	}
	if err := admin.Call(context.Background(), dir, admin.Op("no.such.op"), nil, nil); !errors.Is(err, admin.ErrOpUnsupported) {
		t.Fatalf("unregistered op: %v", err)
	}
}

func TestMalformedRequestsAnswerTypedCodes(t *testing.T) {
	dir := t.TempDir()
	listen(t, dir, &backend{})
	for _, c := range []struct {
		payload string
		want    error
	}{
		{"not json\n", admin.ErrMalformedRequest},
		{`{"v":1,"op":"status","extra":1}` + "\n", admin.ErrMalformedRequest},
		{`{"v":1}` + "\n", admin.ErrMalformedRequest},
		{`{"v":1,"op":"status"} {"v":1}`, admin.ErrMalformedRequest},
		{`{"v":1,"op":"conflicts.ack","body":{"conflict_id":5}}` + "\n", admin.ErrMalformedRequest},
		{`{"v":1,"op":"conflicts.ack","body":{"who":"x"}}` + "\n", admin.ErrMalformedRequest},
		{`{"v":2,"op":"status"}` + "\n", admin.ErrVersionUnsupported},
		{`{"v":1,"op":"drop.tables"}` + "\n", admin.ErrOpUnsupported},
		{"", admin.ErrMalformedRequest},
	} {
		resp := raw(t, dir, []byte(c.payload))
		if resp.OK || resp.Code != c.want.Error() || resp.Version != admin.Version {
			t.Errorf("%q: answered %+v, want %s", c.payload, resp, c.want)
		}
	}
}

func TestOversizeRequestIsRefused(t *testing.T) {
	dir := t.TempDir()
	listen(t, dir, &backend{})
	big := []byte(`{"v":1,"op":"status","body":"` + strings.Repeat("x", admin.MaxRequestBytes) + `"}` + "\n")
	if resp := raw(t, dir, big); resp.OK || resp.Code != admin.ErrRequestTooLarge.Error() {
		t.Fatalf("oversize: %+v", resp)
	}
}

func TestSlowClientTimesOut(t *testing.T) {
	dir := t.TempDir()
	listen(t, dir, &backend{}, func(c *admin.Config) { c.IOTimeout = 50 * time.Millisecond })
	c, err := net.Dial("unix", admin.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(`{"v":1,`)); err != nil { // and never the rest
		t.Fatal(err)
	}
	if resp := readResp(t, c); resp.OK || resp.Code != admin.ErrRequestTimeout.Error() {
		t.Fatalf("slow client: %+v", resp)
	}
}

func TestRequestReadAfterCloseBeganAnswersStoreClosingWhileTheRunningOneFinishes(t *testing.T) {
	dir := t.TempDir()
	b := &backend{entered: make(chan struct{}), block: make(chan struct{})}
	srv := listen(t, dir, b)
	first := make(chan error, 1)
	go func() { first <- admin.Call(context.Background(), dir, admin.OpStatus, nil, nil) }()
	<-b.entered
	late, err := net.Dial("unix", admin.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	eventually(t, "the second connection is accepted", func() bool { return srv.Active() == 2 })
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	eventually(t, "Close begins", srv.Closing)
	if _, err := late.Write([]byte(`{"v":1,"op":"status"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if resp := readResp(t, late); resp.OK || resp.Code != admin.ErrStoreClosing.Error() {
		t.Fatalf("request during close: %+v", resp)
	}
	close(b.block)
	if err := <-first; err != nil {
		t.Fatalf("the running request: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// twoCodes is an error with its own code that also matches a legacy one,
// as a keep-system on a resolved conflict is conflict_not_open and also
// acknowledge_rejected.
type twoCodes struct{ own, legacy error }

func (e twoCodes) Error() string   { return e.own.Error() + ": conflict c9 is not open" }
func (e twoCodes) Unwrap() []error { return []error{e.own, e.legacy} }

// An error matching several registered codes reaches the client matching
// every one of them (errors.Is), with the code its message starts with as
// Code even when another was registered first, and the same one-line text.
func TestHandlerErrorMatchingSeveralCodesMatchesAllOfThemOnTheClient(t *testing.T) {
	dir := t.TempDir()
	errLegacy, errOwn, errOther := errors.New("legacy_rejected"), errors.New("own_not_open"), errors.New("other_code")
	inProcess := fmt.Errorf("%w", twoCodes{own: errOwn, legacy: errLegacy})
	mux := admin.NewMux(&backend{})
	mux.Handle("test.two", func(context.Context, json.RawMessage) (any, error) { return nil, inProcess })
	srv, err := admin.Listen(dir, admin.Config{Mux: mux, Codes: []error{errLegacy, errOther, errOwn, errLegacy}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	remote := admin.Call(context.Background(), dir, "test.two", nil, nil)
	for _, target := range []error{errLegacy, errOwn, errOther, admin.ErrHandlerFailed} {
		if errors.Is(remote, target) != errors.Is(inProcess, target) {
			t.Errorf("errors.Is(%v): remote %v, in process %v", target, errors.Is(remote, target), errors.Is(inProcess, target))
		}
	}
	var re *admin.RemoteError
	if !errors.As(remote, &re) || re.Code != "own_not_open" || !slices.Equal(re.Codes, []string{"own_not_open", "legacy_rejected"}) {
		t.Fatalf("remote error %#v", remote)
	}
	if remote.Error() != inProcess.Error() {
		t.Fatalf("message %q, in process %q", remote.Error(), inProcess.Error())
	}
}

// F13: the protocol is as strict as the README says: keys are spelt
// exactly (no case-variant "OP"), an object never holds a key twice (the
// last one does not silently win), in the envelope and in the body.
func TestF13_CaseVariantAndDuplicateKeysAreRefused(t *testing.T) {
	dir := t.TempDir()
	listen(t, dir, &backend{})
	for _, payload := range []string{
		`{"V":1,"OP":"status"}`,
		`{"v":1,"Op":"status"}`,
		`{"v":1,"op":"status","Body":{}}`,
		`{"v":1,"op":"status","op":"store.backup","body":{"out":"x.db"}}`,
		`{"v":1,"v":1,"op":"status"}`,
		`{"v":1,"op":"conflicts.ack","body":{"conflict_id":"c1","conflict_id":"c2"}}`,
		`{"v":1,"op":"conflicts.ack","body":{"Conflict_ID":"c1"}}`,
		`{"v":1,"op":"conflicts.resolve","body":{"conflict_id":"c1","resolution":"use_sheet","fence":{"conflict_id":"c1","CONFLICT_ID":"c1"}}}`,
		`{"v":1,"op":"status","body":{"a":{"b":1,"b":2}}}`,
	} {
		resp := raw(t, dir, []byte(payload+"\n"))
		if resp.OK || resp.Code != admin.ErrMalformedRequest.Error() {
			t.Errorf("%s: answered %+v, want %s", payload, resp, admin.ErrMalformedRequest)
		}
	}
	// The exact spelling still works.
	if resp := raw(t, dir, []byte(`{"v":1,"op":"status","body":{}}`+"\n")); !resp.OK {
		t.Fatalf("exact keys refused: %+v", resp)
	}
	if resp := raw(t, dir, []byte(`{"v":1,"op":"conflicts.resolve","body":{"conflict_id":"c1","resolution":"use_sheet","fence":{"conflict_id":"c1"}}}`+"\n")); !resp.OK {
		t.Fatalf("exact nested keys refused: %+v", resp)
	}
}
