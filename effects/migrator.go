package effects

import (
	"context"
	"errors"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Migrator brings the tabs that show the layout of an older declaration
// of the entities to the current one (the engine implements it: see
// sheetsio.Client.MigrateTab). While a tab waits for its migration the
// workers leave it alone: no write is claimed for it, no poll or
// anti-entropy pass reads it under the current layout.
type Migrator interface {
	// MigrateLayouts migrates the tabs waiting for it, fenced like a
	// dispatch, and returns those it migrated.
	MigrateLayouts(ctx context.Context) ([]string, error)
	// Migrating reports whether tab waits for its migration.
	Migrating(tab string) bool
}

// migrate runs the migrations due before a pass claims: a migrated Input
// tab's notes are swept and written again (its columns moved). A
// divergence of the authority stops the worker; any other failure is
// logged and the tabs wait for the next pass (their writes are not
// claimed meanwhile).
func (d *Dispatcher) migrate(ctx context.Context) error {
	if d.cfg.Layouts == nil {
		return nil
	}
	done, err := d.cfg.Layouts.MigrateLayouts(ctx)
	for _, tab := range done {
		delete(d.swept, tab)
		for k, n := range d.notes {
			if n.Tab == tab {
				delete(d.notes, k)
			}
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sheetsio.ErrAuthorityStale), errors.Is(err, sheetsio.ErrAuthorityForeign):
		return d.diverged(err.Error())
	case errors.Is(err, ErrDisplaced):
		return err
	}
	d.cfg.Logger.Warn("sheet layout migration failed; retrying on the next pass", "err", err.Error())
	return nil
}

// unmigrating drops the tabs that wait for their migration.
func unmigrating(m Migrator, tabs []string) []string {
	if m == nil {
		return tabs
	}
	out := make([]string, 0, len(tabs))
	for _, t := range tabs {
		if !m.Migrating(t) {
			out = append(out, t)
		}
	}
	return out
}
