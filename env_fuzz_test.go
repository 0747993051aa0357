package hikoutei

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// durationMaxMS is the longest cadence a time.Duration holds (about 292
// years, 9,223,372,036,854 ms): a larger safe integer is accepted and
// clamped to it.
const durationMaxMS = int64(1<<63-1) / int64(time.Millisecond)

// plainMS is the oracle of I20: a plain positive decimal integer of
// milliseconds (ASCII digits, no leading zero) within [1, 2^53-1].
func plainMS(v string) (int64, bool) {
	if v == "" || v[0] == '0' || strings.TrimLeft(v, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > 1<<53-1 {
		return 0, false
	}
	return n, true
}

func FuzzParseIntervalMS(f *testing.F) {
	for _, s := range []string{"1", "60000", "9223372036854", "9223372036855", "9007199254740991", "9007199254740992", "0", "01", "-5", "+5", "1e3", "0x10",
		" 5", "5 ", "1.5", "１２", "٣", "", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, err := ParseIntervalMS(v)
		want, ok := plainMS(v)
		switch {
		case ok && (err != nil || n != want):
			t.Fatalf("ParseIntervalMS(%q) = %d, %v; want %d", v, n, err, want)
		case !ok && err == nil:
			t.Fatalf("ParseIntervalMS(%q) accepted %d", v, n)
		case !ok && !errors.Is(err, ErrInvalidInterval):
			t.Fatalf("ParseIntervalMS(%q) error %v is not invalid_polling_interval", v, err)
		}
	})
}

// FuzzResolveCadence: the polling env vars either both resolve to their
// parsed values (an absent or empty one to the default), or Open's
// cadence resolution fails with sync_startup_failed (I20).
func FuzzResolveCadence(f *testing.F) {
	f.Add("250", "", false)
	f.Add("", "1000", true)
	f.Add("0", "5", false)
	f.Add("7", "1e3", true)
	f.Add("9007199254740991", "9223372036855", true)
	f.Fuzz(func(t *testing.T, poll, full string, fullSet bool) {
		env := map[string]string{EnvPollingInterval: poll}
		if fullSet {
			env[EnvFullScanInterval] = full
		}
		o := SyncOptions{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
		err := resolveCadence(&o)
		want := func(v string, def time.Duration) (time.Duration, bool) {
			if v == "" {
				return def, true
			}
			n, ok := plainMS(v)
			return time.Duration(min(n, durationMaxMS)) * time.Millisecond, ok
		}
		wp, okp := want(poll, DefaultPollingInterval)
		wf, okf := want(env[EnvFullScanInterval], DefaultFullScanInterval)
		if !okp || !okf {
			if !errors.Is(err, ErrSyncStartup) {
				t.Fatalf("poll %q full %q (set %v): %v, cadences %v %v", poll, full, fullSet, err, o.PollingInterval, o.FullScanInterval)
			}
			return
		}
		if err != nil || o.PollingInterval != wp || o.FullScanInterval != wf {
			t.Fatalf("poll %q full %q: %v, cadences %v %v; want %v %v", poll, full, err, o.PollingInterval, o.FullScanInterval, wp, wf)
		}
	})
}
