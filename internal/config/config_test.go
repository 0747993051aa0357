package config

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

func envOf(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// The cadence variables accept only plain positive decimal integers of
// milliseconds; anything else fails naming the variable (and fails Open
// with sync_startup_failed: tested in the root package). Unset or empty
// leaves the cadence to the caller's option or default (0 here).
func TestI20_PollingCadenceEnvAcceptsOnlyPlainPositiveDecimalIntegers(t *testing.T) {
	for _, bad := range []string{"0x10", "1e3", "+100", "-100", "1.5", " 100", "100 ", "0", "00100", "9007199254740992", "１００", "10_000", "abc"} {
		for _, env := range []string{EnvPollingInterval, EnvFullScanInterval, EnvReconcileInterval} {
			lookup := envOf(map[string]string{env: bad})
			if d, err := Interval(lookup, env); !errors.Is(err, ErrInvalidInterval) || !strings.Contains(err.Error(), env) {
				t.Fatalf("%s=%q: Interval returned %v, %v; want invalid_polling_interval naming the variable", env, bad, d, err)
			}
			if _, err := LoadSync(lookup); !errors.Is(err, ErrInvalidInterval) || !strings.Contains(err.Error(), env) {
				t.Fatalf("%s=%q: LoadSync returned %v; want invalid_polling_interval naming the variable", env, bad, err)
			}
		}
	}
	for _, tc := range []struct {
		env, val string
		want     time.Duration
	}{{"", "", 0}, {EnvPollingInterval, "", 0}, {EnvPollingInterval, "1500", 1500 * time.Millisecond},
		{EnvPollingInterval, "86400000", 24 * time.Hour},
		{EnvPollingInterval, "9007199254740991", time.Duration(maxIntervalMS) * time.Millisecond}} {
		lookup := func(k string) (string, bool) { return tc.val, k == tc.env }
		d, err := Interval(lookup, EnvPollingInterval)
		s, lerr := LoadSync(lookup)
		if err != nil || lerr != nil || d != tc.want || s.PollingInterval != tc.want || s.FullScanInterval != 0 {
			t.Fatalf("%s=%q: %v / %v, got %v (LoadSync %v / %v)", tc.env, tc.val, err, lerr, d, s.PollingInterval, s.FullScanInterval)
		}
	}
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
// parsed values (an absent or empty one to 0: the caller's default), or
// loading the sync configuration fails with invalid_polling_interval, which Open
// reports as sync_startup_failed (I20).
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
		s, err := LoadSync(envOf(env))
		want := func(v string) (time.Duration, bool) {
			if v == "" {
				return 0, true
			}
			n, ok := plainMS(v)
			return time.Duration(min(n, durationMaxMS)) * time.Millisecond, ok
		}
		wp, okp := want(poll)
		wf, okf := want(env[EnvFullScanInterval])
		if !okp || !okf {
			if !errors.Is(err, ErrInvalidInterval) {
				t.Fatalf("poll %q full %q (set %v): %v, cadences %v %v", poll, full, fullSet, err, s.PollingInterval, s.FullScanInterval)
			}
			return
		}
		if err != nil || s.PollingInterval != wp || s.FullScanInterval != wf {
			t.Fatalf("poll %q full %q: %v, cadences %v %v; want %v %v", poll, full, err, s.PollingInterval, s.FullScanInterval, wp, wf)
		}
	})
}
