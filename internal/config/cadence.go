package config

import (
	"cmp"
	"errors"
	"time"
)

// Cadences are the sync cadences an application may set; 0 means "from
// the environment, else the default".
type Cadences struct {
	Polling, FullScan, Reconcile time.Duration
	// DivergedBound stays 0 when unset everywhere: the engine derives it
	// from Reconcile.
	DivergedBound time.Duration
}

// ErrNegativeCadence: an explicit cadence is negative.
var ErrNegativeCadence = errors.New("negative sync interval")

// Resolve fills every zero cadence of c from its variable (strict
// parsing: Interval, Seconds), else its default. Errors:
// ErrNegativeCadence, ErrInvalidInterval naming the variable.
func (c *Cadences) Resolve(lookup Lookup) error {
	if c.Polling < 0 || c.FullScan < 0 || c.Reconcile < 0 || c.DivergedBound < 0 {
		return ErrNegativeCadence
	}
	for _, v := range []struct {
		out *time.Duration
		env string
		def time.Duration
	}{{&c.Polling, EnvPollingInterval, DefaultPollingInterval}, {&c.FullScan, EnvFullScanInterval, DefaultFullScanInterval},
		{&c.Reconcile, EnvReconcileInterval, DefaultReconcileInterval}} {
		if *v.out > 0 {
			continue
		}
		d, err := Interval(lookup, v.env)
		if err != nil {
			return err
		}
		*v.out = cmp.Or(d, v.def)
	}
	if c.DivergedBound > 0 {
		return nil
	}
	var err error
	c.DivergedBound, err = Seconds(lookup, EnvDivergedBound)
	return err
}
