package storagefault

import (
	"fmt"
	"os"
	"testing"
)

// TestMain makes the test binary a campaign child when the campaign
// re-executes it with a run in its environment.
func TestMain(m *testing.M) {
	ok, err := ChildFromEnv(os.Stdout)
	if ok {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testRunTimeout bounds a child run in tests (a hang fails the test
// instead of stalling it).
const testRunTimeout = 3 * 60e9
