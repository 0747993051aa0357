package disk

import (
	"fmt"
	"time"
)

// Sample is the store's size on disk (Files.Total) at a time of the
// store's clock.
type Sample struct {
	At    time.Time
	Bytes int64
}

// Limits are the rule's thresholds.
type Limits struct {
	// Horizon: warn when the filesystem fills within it at the growth
	// the samples show.
	Horizon time.Duration
	// WarnShare: warn above this share used; CriticalShare: critical
	// (ErrDiskFull) above this one.
	WarnShare, CriticalShare float64
	// MinSpan is the shortest span of samples a growth rate is measured
	// over (shorter: no rate).
	MinSpan time.Duration
}

// DefaultLimits: warn at 90 % used or when full within 7 days; critical
// at 98 % used; a rate needs samples 10 minutes apart.
var DefaultLimits = Limits{Horizon: 7 * 24 * time.Hour, WarnShare: 0.90, CriticalShare: 0.98, MinSpan: 10 * time.Minute}

// Verdict is what Project found.
type Verdict struct {
	Err error // nil, ErrDiskFilling or ErrDiskFull (wrapped, with the detail)
	// Growth is the store's growth in bytes per second over the samples
	// (0: unknown, none or shrinking).
	Growth float64
	// FullAt is when the filesystem fills at that growth (zero: never).
	FullAt time.Time
	Used   float64 // share used now, 0 to 1
}

// Project judges the filesystem of space at now from the store's size
// samples (oldest first): critical above CriticalShare used; a warning
// above WarnShare used or when it fills within Horizon at the growth
// between the first and the last sample. Pure.
func Project(samples []Sample, space Space, now time.Time, lim Limits) Verdict {
	v := Verdict{Used: space.UsedShare(), Growth: growth(samples, lim.MinSpan)}
	if v.Growth > 0 && space.Total > 0 {
		v.FullAt = now.Add(time.Duration(float64(space.Free) / v.Growth * float64(time.Second)))
	}
	switch {
	case space.Total == 0:
	case v.Used >= lim.CriticalShare:
		v.Err = fmt.Errorf("%w: the filesystem holding the store is %.1f%% used (%d bytes free)", ErrDiskFull, 100*v.Used, space.Free)
	case v.Used >= lim.WarnShare:
		v.Err = fmt.Errorf("%w: the filesystem holding the store is %.1f%% used%s", ErrDiskFilling, 100*v.Used, fullAtText(v))
	case v.Growth > 0 && v.FullAt.Sub(now) <= lim.Horizon:
		v.Err = fmt.Errorf("%w: the filesystem holding the store fills%s", ErrDiskFilling, fullAtText(v))
	}
	return v
}

// growth is the bytes per second between the first and the last sample
// (0 over less than minSpan, or when the store did not grow).
func growth(samples []Sample, minSpan time.Duration) float64 {
	if len(samples) < 2 {
		return 0
	}
	first, last := samples[0], samples[len(samples)-1]
	span := last.At.Sub(first.At)
	if span < minSpan || span <= 0 || last.Bytes <= first.Bytes {
		return 0
	}
	return float64(last.Bytes-first.Bytes) / span.Seconds()
}

// fullAtText is " at <time> at the current growth (<n> bytes/day)", or
// nothing without growth.
func fullAtText(v Verdict) string {
	if v.Growth <= 0 {
		return ""
	}
	return fmt.Sprintf("; full at %s at the store's current growth (%.0f bytes a day)",
		v.FullAt.UTC().Format(time.RFC3339), v.Growth*86400)
}
