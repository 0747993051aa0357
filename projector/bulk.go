package projector

import (
	"fmt"
	"os"

	"zombiezen.com/go/sqlite/sqlitex"
)

// A bulk load (Options.Bulk) builds a scratch file that only becomes a
// read model once complete: the rows are written once (no WAL copy, no
// rollback journal) and never synced until Close, which switches the file
// to WAL — what every read model is — and syncs it.

// pragmas are the connection settings of a read model, or of a bulk load.
func pragmas(bulk bool) []string {
	if bulk {
		return []string{"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF", "PRAGMA busy_timeout=5000"}
	}
	return []string{"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=5000"}
}

// endBulk turns a bulk load into a WAL read model with the usual settings.
func (p *Projector) endBulk() error {
	for _, pragma := range []string{"PRAGMA synchronous=NORMAL", "PRAGMA journal_mode=WAL"} {
		if err := sqlitex.ExecuteTransient(p.conn, pragma, nil); err != nil {
			return fmt.Errorf("%w: end bulk load: %s: %w", ErrProjection, pragma, err)
		}
	}
	return nil
}

// syncFile flushes path to stable storage.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w: sync: %w", ErrProjection, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: sync: %w", ErrProjection, err)
	}
	return nil
}
