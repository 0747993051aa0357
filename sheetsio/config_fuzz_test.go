package sheetsio

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseIntervalMS: HIKOUTEI_SYNC_RATE_LIMIT_INTERVAL_MS accepts exactly
// the plain positive decimal integers within [1, 2^53-1] (I20). Values a
// time.Duration cannot hold (above 9,223,372,036,854 ms) are either
// clamped to its maximum or rejected with sync_startup_failed: today this
// parser rejects them while the root polling parser clamps them.
func FuzzParseIntervalMS(f *testing.F) {
	for _, s := range []string{"1", "250", "9223372036854", "9223372036855", "9007199254740991", "9007199254740992", "0", "007",
		"-1", "+1", "1e3", "0x1F", " 1", "1\n", "1.0", "１", "", "99999999999999999999"} {
		f.Add(s)
	}
	const durationMaxMS = int64(1<<63-1) / int64(time.Millisecond)
	f.Fuzz(func(t *testing.T, v string) {
		d, err := ParseIntervalMS(RateLimitIntervalEnv, v)
		want, ok := int64(0), v != "" && v[0] != '0' && strings.TrimLeft(v, "0123456789") == ""
		if ok {
			n, perr := strconv.ParseInt(v, 10, 64)
			want, ok = n, perr == nil && n <= 1<<53-1
		}
		switch {
		case ok && want > durationMaxMS:
			if (err == nil && d != time.Duration(durationMaxMS)*time.Millisecond) || (err != nil && !errors.Is(err, ErrSyncStartupFailed)) {
				t.Fatalf("ParseIntervalMS(%q) = %v, %v: neither clamped nor sync_startup_failed", v, d, err)
			}
		case ok && (err != nil || d != time.Duration(want)*time.Millisecond):
			t.Fatalf("ParseIntervalMS(%q) = %v, %v; want %d ms", v, d, err, want)
		case !ok && err == nil:
			t.Fatalf("ParseIntervalMS(%q) accepted %v", v, d)
		case !ok && !errors.Is(err, ErrSyncStartupFailed):
			t.Fatalf("ParseIntervalMS(%q): %v is not sync_startup_failed", v, err)
		}
	})
}
