package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/operator"
)

// Environment of the re-executed test binary (see TestMain).
const (
	// envTestCLI makes the test binary the hikoutei CLI: os.Args[1:] are
	// its arguments (cliCommand).
	envTestCLI = "HIKOUTEI_TEST_AS_CLI"
	// envTestHold makes the test binary open the store in that directory,
	// print "held" and wait until it is killed (holdStoreProcess).
	envTestHold = "HIKOUTEI_TEST_HOLD_STORE"
	// envTestOperatorHold makes the test binary the operator campaign's
	// running store in that directory (operatorHoldCommand).
	envTestOperatorHold = "HIKOUTEI_TEST_OPERATOR_HOLD"
	// envTestHoldQuiet makes that process beat no heartbeat: it writes
	// nothing while it holds the store (holdQuietStoreProcess).
	envTestHoldQuiet = "HIKOUTEI_TEST_HOLD_QUIET"
)

// TestMain makes the test binary the CLI, or a process holding a store,
// when a test re-executes it so (a process to pipe, interrupt or kill).
func TestMain(m *testing.M) {
	switch {
	case os.Getenv(envTestCLI) != "":
		main()
	case os.Getenv(envTestOperatorHold) != "":
		ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := operator.Hold(ctx, os.Getenv(envTestOperatorHold), os.Stdout, 50*time.Millisecond)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case os.Getenv(envTestHold) != "":
		o := hikoutei.Options{Operation: "test-hold"}
		if os.Getenv(envTestHoldQuiet) != "" {
			o.HeartbeatInterval = -1
		}
		s, err := hikoutei.Open(context.Background(), os.Getenv(envTestHold), o, itemDef)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("held")
		<-make(chan struct{})
		s.Close()
	}
	os.Exit(m.Run())
}

// operatorHoldCommand is the operator campaign's running store (this test
// binary re-executed), as `hikoutei-lab operator-hold --dir dir` is.
func operatorHoldCommand(dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envTestOperatorHold+"="+dir)
	return cmd
}

// cliCommand is the CLI (this test binary re-executed) with args.
func cliCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envTestCLI+"=1")
	return cmd
}

// holdStoreProcess starts a process that opens the store in dir and holds it
// until the test ends (or it is killed).
func holdStoreProcess(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	return holdStoreWith(t, dir)
}

// holdQuietStoreProcess is holdStoreProcess with no heartbeat: the
// holder writes nothing after its open.
func holdQuietStoreProcess(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	return holdStoreWith(t, dir, envTestHoldQuiet+"=1")
}

// holdStoreWith starts the holding process with env added.
func holdStoreWith(t *testing.T, dir string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), envTestHold+"="+dir), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(line)
	}()
	select {
	case line := <-ready:
		if line != "held" {
			t.Fatalf("holder said %q", line)
		}
	case <-time.After(time.Minute):
		t.Fatal("the holder never opened the store")
	}
	return cmd
}
