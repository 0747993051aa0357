package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/nats-io/nkeys"
	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// validate checks every serve flag before anything touches the store
// (exit 2, naming the flag, never its value): the environment was
// checked before (checkEnv), and a flag's value is never blamed on the
// variable it overrides.
func (f serveFlags) validate() error {
	if err := requireDir(f.dir); err != nil {
		return err
	}
	checks := []func() error{f.checkSpreadsheet, f.checkEndpoint, f.checkCredentials, f.checkNATS,
		func() error { return checkListenAddr("--http", f.httpAddr) },
		func() error { return checkListenAddr("--nats-listen", f.natsListen) },
		f.checkWakeInterval, f.checkRetention, func() error { _, err := segmentsURL(f.segments); return err },
		func() error { _, err := routesOf(f.routes); return err }}
	for _, check := range checks {
		if err := check(); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// checkSpreadsheet parses --spreadsheet, or the variable when the flag
// is not given, and names whichever it parsed.
func (f serveFlags) checkSpreadsheet() error {
	v, source := f.spreadsheet, `flag "--spreadsheet"`
	if v == "" {
		v, _ = config.OS(hikoutei.EnvSpreadsheetURL)
		source = "environment: " + hikoutei.EnvSpreadsheetURL
	}
	if v == "" {
		return nil
	}
	if _, err := sheetsio.ParseSpreadsheetURL(v); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	return nil
}

// checkEndpoint parses --sheets-endpoint as the environment variable it
// overrides is parsed, and names the flag.
func (f serveFlags) checkEndpoint() error {
	if f.endpoint == "" {
		return nil
	}
	err := config.Check(func(k string) (string, bool) { return f.endpoint, k == hikoutei.EnvSheetsEndpoint })
	var envErr *config.EnvError
	if errors.As(err, &envErr) {
		return fmt.Errorf(`flag "--sheets-endpoint": %w`, envErr.Err)
	}
	return err
}

// checkCredentials checks each --credentials names a file; those of a
// pool also must not hold the path list separator (the pool goes on as
// one list).
func (f serveFlags) checkCredentials() error {
	for i, path := range append([]string{f.credentials}, f.pool...) {
		if path == "" {
			continue
		}
		if i > 0 && strings.ContainsRune(path, os.PathListSeparator) {
			return fmt.Errorf(`flag "--credentials": a pool key's path must not hold %q`, os.PathListSeparator)
		}
		if fi, err := os.Stat(path); err != nil || fi.IsDir() {
			return fmt.Errorf(`flag "--credentials": %s is not a readable file`, path)
		}
	}
	return nil
}

func (f serveFlags) checkNATS() error {
	if f.natsURL != "" {
		if err := config.ParseNATSURL(f.natsURL); err != nil {
			return fmt.Errorf(`flag "--nats": %w`, err)
		}
	}
	for _, k := range f.natsListenNkeys {
		if !nkeys.IsValidPublicUserKey(k) {
			return errors.New(`flag "--nats-listen-nkey": not a public user nkey (U…)`)
		}
	}
	return nil
}

// checkListenAddr accepts "" or HOST:PORT with a numeric or named port.
func checkListenAddr(flag, addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return fmt.Errorf(`flag "%s" must be HOST:PORT: %w`, flag, err)
	}
	return nil
}

// checkWakeInterval refuses a --wake-min-interval under a second: wakes
// would then spend the read quota as fast as people type.
func (f serveFlags) checkWakeInterval() error {
	if f.wakeMinInterval != 0 && f.wakeMinInterval < minWakeInterval {
		return fmt.Errorf(`flag "--wake-min-interval": %s is under %s`, f.wakeMinInterval, minWakeInterval)
	}
	return nil
}

// addRetentionFlags adds serve's retention flags (Options.Retention) and
// --snapshot-every, which --retain-below-snapshot needs.
func addRetentionFlags(cmd *cobra.Command, f *serveFlags) {
	fl := cmd.Flags()
	fl.DurationVar(&f.retention.MaxAge, "retain-max-age", 0, "seal records committed longer ago than this (e.g. 720h; 0: no age rule)")
	fl.Uint64Var(&f.retention.KeepRecords, "retain-records", 0, "keep at least the newest N records in log.db, seal older ones (0: no count rule)")
	fl.BoolVar(&f.retention.BelowSnapshot, "retain-below-snapshot", false, "seal the records the newest snapshot covers (needs --snapshot-every)")
	fl.Uint64Var(&f.retention.MinBatch, "retain-min-batch", 0, fmt.Sprintf("fewest records one background seal moves (0: %d)", hikoutei.DefaultRetentionMinBatch))
	fl.Uint64Var(&f.snapshotEvery, "snapshot-every", 0, "snapshot the read model each time N events were applied (0: never)")
}

// checkRetention refuses retention flags that cannot work together.
func (f serveFlags) checkRetention() error {
	r := f.retention
	switch {
	case r.MaxAge < 0:
		return errors.New(`flag "--retain-max-age" must not be negative`)
	case r.BelowSnapshot && f.snapshotEvery == 0:
		return errors.New(`flag "--retain-below-snapshot" needs --snapshot-every (serve takes no snapshot otherwise)`)
	case r.MinBatch > 0 && r == (hikoutei.Retention{MinBatch: r.MinBatch}):
		return errors.New(`flag "--retain-min-batch" needs one of --retain-max-age, --retain-records, --retain-below-snapshot`)
	}
	return nil
}
