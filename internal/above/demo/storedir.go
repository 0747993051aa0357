package demo

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
)

// removal tells, for a store directory the run made itself, how much
// space it takes and the command that removes it: the store is kept for
// inspection, never removed by the demo.
func (e *env) removal() {
	if !e.cfg.MadeDir {
		return
	}
	fmt.Fprintf(e.cfg.Out, "  the store takes %s; remove it when done: rm -r %s\n", megabytes(dirSize(e.cfg.Dir)), shellQuote(e.cfg.Dir))
}

// dirSize is the total size of the regular files under dir (what it
// could not read counts as 0).
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// megabytes renders n bytes in MB, one decimal below 10 MB.
func megabytes(n int64) string {
	mb := float64(n) / 1e6
	if mb < 10 {
		return fmt.Sprintf("%.1f MB", mb)
	}
	return fmt.Sprintf("%.0f MB", mb)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote is path as one shell word: as is when it holds only
// characters a shell takes literally, else single-quoted.
func shellQuote(path string) string {
	if shellSafe.MatchString(path) {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
