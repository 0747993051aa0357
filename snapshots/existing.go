package snapshots

import (
	"log/slog"
	"path/filepath"
)

// Existing returns the snapshot folder under storeDir as it is, for
// reading only: unlike Open it creates nothing and removes nothing (a
// tool reading a store it does not hold). On a missing folder Newest
// finds no snapshot.
func Existing(storeDir string, logger *slog.Logger) *Dir {
	if logger == nil {
		logger = slog.Default()
	}
	return &Dir{path: filepath.Join(storeDir, DirName), keep: DefaultKeep, log: logger}
}
