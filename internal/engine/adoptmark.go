package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/privatefile"
	"github.com/hikoutei/hikoutei-go/internal/process"
)

// The mark of an adoption under way. A real adoption writes, in the
// store directory, before its first unit, a small file naming its tab,
// entity and process, updated after each unit it commits; it removes the
// file once the tab is kept. A file left (the process killed, the
// machine stopped, or the run failed) is an adoption that did not finish:
// some rows are records already, the others not quarantined, the tab not
// renamed. Status and Health name it (ReasonAdoptInterrupted); running
// the same adoption again finishes it and removes the file.

// adoptMarkPrefix and adoptMarkSuffix frame the file's name:
// .adopt-<12 hex digits of the tab title's SHA-256>.json.
const (
	adoptMarkPrefix = ".adopt-"
	adoptMarkSuffix = ".json"
	adoptMarkLimit  = 64 << 10
)

// AdoptMark is what the mark of an adoption records (never a cell's
// value): the tab, the entity, the title it is to be kept under, when it
// started (the store's clock), the process adopting, the rows it is to
// create and those it created, in units.
type AdoptMark struct {
	Tab     string    `json:"tab"`
	Entity  string    `json:"entity"`
	KeptAs  string    `json:"kept_as"`
	Started time.Time `json:"started"`
	PID     int       `json:"pid"`
	Creates int       `json:"creates"`
	Created int       `json:"created"`
	Units   int       `json:"units"`
	// File is the mark's name in the store directory (not recorded).
	File string `json:"-"`
}

// adoptMarkName is the file name of the mark of tab's adoption.
func adoptMarkName(tab string) string {
	sum := sha256.Sum256([]byte(tab))
	return adoptMarkPrefix + hex.EncodeToString(sum[:6]) + adoptMarkSuffix
}

// isAdoptMarkName reports whether n has the shape of a mark's name
// (adoptMarkName): a person's own .adopt-notes.json is not a mark.
func isAdoptMarkName(n string) bool {
	h, pre := strings.CutPrefix(n, adoptMarkPrefix)
	h, suf := strings.CutSuffix(h, adoptMarkSuffix)
	if !pre || !suf || len(h) != 12 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// AdoptMarks reads the marks of the adoptions under way or interrupted in
// the store directory dir, by tab (nil when none or dir cannot be read; a
// mark that cannot be read is listed with its file name only).
func AdoptMarks(dir string) []AdoptMark {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []AdoptMark
	for _, ent := range entries {
		n := ent.Name()
		if !ent.Type().IsRegular() || !isAdoptMarkName(n) {
			continue
		}
		var m AdoptMark
		if b, err := privatefile.Read(filepath.Join(dir, n), adoptMarkLimit); err == nil {
			_ = json.Unmarshal(b, &m)
		}
		m.File = n
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tab < out[j].Tab })
	return out
}

// InterruptedAdoptions are the marks in dir whose process no longer runs:
// adoptions killed, or stopped with the machine.
func InterruptedAdoptions(dir string) []AdoptMark {
	var out []AdoptMark
	for _, m := range AdoptMarks(dir) {
		if m.PID != os.Getpid() && !process.Runs(m.PID) {
			out = append(out, m)
		}
	}
	return out
}

// AdoptInterrupted is why Health names the adoptions this store did not
// finish (ErrAdoptInterrupted with each tab and what it created), nil
// when none: a mark of a process that no longer runs, or of this one for
// a tab no adoption of this store is adopting now (it failed).
func (e *Engine) AdoptInterrupted() error {
	var tabs []string
	for _, m := range AdoptMarks(e.dir) {
		if e.adopting(m.Tab) || (m.PID != os.Getpid() && process.Runs(m.PID)) {
			continue
		}
		tabs = append(tabs, fmt.Sprintf("%q (%d of %d rows created)", m.Tab, m.Created, m.Creates))
	}
	if tabs == nil {
		return nil
	}
	return fmt.Errorf("%w: the adoption of %s did not finish: adopt again to finish it, or remove its mark (hikoutei status names it) to leave it",
		ErrAdoptInterrupted, strings.Join(tabs, ", "))
}

// adopting reports whether an adoption of tab runs in this store now.
func (e *Engine) adopting(tab string) bool {
	e.adoptMu.Lock()
	defer e.adoptMu.Unlock()
	return e.adoptRuns[tab] > 0
}

// markAdoption records that a's adoption runs in this store and writes its
// mark; done forgets it.
func (e *Engine) markAdoption(a *adoption) (done func(), err error) {
	e.adoptMu.Lock()
	if e.adoptRuns == nil {
		e.adoptRuns = map[string]int{}
	}
	e.adoptRuns[a.req.Tab]++
	e.adoptMu.Unlock()
	a.mark = &AdoptMark{Tab: a.req.Tab, Entity: a.req.Entity, KeptAs: a.report.KeptAs, Started: e.cfg.Clock.Now().UTC(),
		PID: os.Getpid(), Creates: a.report.Created}
	done = func() {
		e.adoptMu.Lock()
		e.adoptRuns[a.req.Tab]--
		e.adoptMu.Unlock()
	}
	if err := e.writeAdoptMark(a.mark); err != nil {
		done()
		return nil, err
	}
	return done, nil
}

// writeAdoptMark writes m over its file, through a synced temporary file
// renamed into place.
func (e *Engine) writeAdoptMark(m *AdoptMark) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	path := filepath.Join(e.dir, adoptMarkName(m.Tab))
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	if err := privatefile.Create(tmp, b); err != nil {
		return fmt.Errorf("adopt: write its mark: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("adopt: write its mark: %w", privatefile.Pathless(err))
	}
	return nil
}

// removeAdoptMark removes the mark of tab's adoption (finished).
func (e *Engine) removeAdoptMark(tab string) error {
	err := os.Remove(filepath.Join(e.dir, adoptMarkName(tab)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("adopt: remove its mark: %w", privatefile.Pathless(err))
	}
	return nil
}
