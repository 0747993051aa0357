package sheetsio

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseIntervalMS: HIKOUTEI_SYNC_RATE_LIMIT_INTERVAL_MS accepts exactly
// the plain positive decimal integers within [1, 2^53-1] (I20), and its
// error never repeats the value.
func FuzzParseIntervalMS(f *testing.F) {
	for _, s := range []string{"1", "250", "9007199254740991", "9007199254740992", "0", "007", "-1", "+1", "1e3", "0x1F",
		" 1", "1\n", "1.0", "１", "", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := ParseIntervalMS(RateLimitIntervalEnv, v)
		want, ok := int64(0), v != "" && v[0] != '0' && strings.TrimLeft(v, "0123456789") == ""
		if ok {
			n, perr := strconv.ParseInt(v, 10, 64)
			want, ok = n, perr == nil && n <= 1<<53-1
		}
		switch {
		case ok && (err != nil || d != time.Duration(want)*time.Millisecond):
			t.Fatalf("ParseIntervalMS(%q) = %v, %v; want %d ms", v, d, err, want)
		case !ok && err == nil:
			t.Fatalf("ParseIntervalMS(%q) accepted %v", v, d)
		case !ok && !errors.Is(err, ErrSyncStartupFailed):
			t.Fatalf("ParseIntervalMS(%q): %v is not sync_startup_failed", v, err)
		case !ok && len(v) > 2 && strings.Contains(err.Error(), v):
			t.Fatalf("the error repeats the value: %v", err)
		}
	})
}
