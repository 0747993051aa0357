package events

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// A read of a memory map past the end of a file that was truncated under
// it is a SIGBUS, which Go cannot recover unless the goroutine asked for
// faults to panic: guard does, and the fault becomes log_corrupt.
func TestI27_FaultOnTruncatedMapIsLogCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mapped")
	must(t, os.WriteFile(path, make([]byte, 8192), 0o600))
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	data, err := unix.Mmap(int(f.Fd()), 0, 8192, unix.PROT_READ, unix.MAP_SHARED)
	must(t, err)
	defer unix.Munmap(data)
	must(t, os.Truncate(path, 0))
	var b byte
	err = guard("read", func() error { b = data[4096]; return nil })
	wantCorrupt(t, "fault", err, CheckPanic, 0)
	_ = b
}

func TestI27_GuardTurnsBboltPanicsIntoLogCorrupt(t *testing.T) {
	err := guard("read", func() error { panic("assertion failed: Page expected to be: 132, but self identifies as 0") })
	wantCorrupt(t, "string panic", err, CheckPanic, 132)
	var s []int
	i := 3
	err = guard("read", func() error { s[i] = 1; return nil })
	wantCorrupt(t, "runtime error", err, CheckPanic, 0)
	defer func() {
		if _, ok := recover().(*failpoint.Crash); !ok {
			t.Fatal("a failpoint crash was swallowed")
		}
	}()
	_ = guard("append", func() error { panic(&failpoint.Crash{Name: "x"}) })
	t.Fatal("not reached")
}
