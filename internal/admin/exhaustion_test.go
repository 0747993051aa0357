package admin_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// envExhaustChild makes the re-executed test binary run the body of
// TestF6_AcceptLoopSurvivesDescriptorExhaustion: it lowers its own
// descriptor limit, which must not affect the other tests.
const envExhaustChild = "HIKOUTEI_ADMIN_TEST_EXHAUST"

// F6: a burst of connections past the process's descriptor limit makes
// Accept fail with EMFILE. The channel keeps accepting once descriptors
// are free again, and AcceptErr names the failure meanwhile
// (admin_accept_failed).
func TestF6_AcceptLoopSurvivesDescriptorExhaustion(t *testing.T) {
	if os.Getenv(envExhaustChild) != "" {
		exhaustChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestF6_AcceptLoopSurvivesDescriptorExhaustion$", "-test.v")
	cmd.Env = append(os.Environ(), envExhaustChild+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
}

func exhaustChild(t *testing.T) {
	dir := t.TempDir()
	srv := listen(t, dir, &backend{})
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = 64
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	// Connect until the process has no descriptor left: the server's
	// Accept then fails with EMFILE for the connections still queued.
	var conns []net.Conn
	for len(conns) < 200 {
		c, err := net.Dial("unix", admin.SocketPath(dir))
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("dial %d: %v", len(conns), err)
			}
			break
		}
		conns = append(conns, c)
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.AcceptErr() == nil {
		if time.Now().After(deadline) {
			t.Fatal("Accept never failed with the descriptors exhausted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	err := srv.AcceptErr()
	if !errors.Is(err, admin.ErrAcceptFailed) || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("AcceptErr = %v, want admin_accept_failed wrapping EMFILE", err)
	}
	t.Logf("while exhausted: %v", err)
	for _, c := range conns {
		c.Close()
	}
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var st admin.StatusResponse
	if err := admin.Call(ctx, dir, admin.OpStatus, nil, &st); err != nil || st.PID != 42 {
		t.Fatalf("after the burst: %+v %v", st, err)
	}
	if err := srv.AcceptErr(); err != nil {
		t.Fatalf("accepting again, AcceptErr still %v", err)
	}
}

// F6: connections past MaxConns are answered admin_busy at once (never
// held open), and Call tries again until one is served.
func TestF6_ConnectionsPastTheCapAreAnsweredBusyAndCallRetries(t *testing.T) {
	dir := t.TempDir()
	b := &backend{entered: make(chan struct{}, 8), block: make(chan struct{})}
	srv := listen(t, dir, b, func(c *admin.Config) { c.MaxConns = 2 })
	held := make(chan error, 2)
	for range 2 {
		go func() { held <- admin.Call(context.Background(), dir, admin.OpStatus, nil, nil) }()
		<-b.entered
	}
	resp := raw(t, dir, []byte(`{"v":1,"op":"status"}`+"\n"))
	if resp.OK || resp.Code != admin.ErrBusy.Error() {
		t.Fatalf("third connection: %+v, want admin_busy", resp)
	}
	if n := srv.Active(); n != 2 {
		t.Fatalf("active %d, want 2", n)
	}
	third := make(chan error, 1)
	go func() {
		third <- admin.Call(context.Background(), dir, admin.OpConflictResolve, admin.ResolveRequest{ConflictID: "c1", Resolution: "use_sheet"}, nil)
	}()
	time.Sleep(100 * time.Millisecond)
	close(b.block)
	for range 2 {
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-third; err != nil {
		t.Fatalf("a call refused busy was not retried: %v", err)
	}
}
