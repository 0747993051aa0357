package disk

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Kinds of set-aside read model, the word in its name: why the store
// renamed read.sqlite instead of using it.
const (
	KindUnusable      = "unusable"       // it could not be opened as this store's read model
	KindBeforeRebuild = "before-rebuild" // a rebuild (replay --dir, restore) replaced it
	KindAheadOfLog    = "ahead-of-log"   // it was ahead of a log that had lost records
)

// setAsideTime is the layout of the time in a set-aside name (UTC).
const setAsideTime = "20060102T150405.000000000Z"

// firstSetAsideYear: no store set a read model aside before it, so an
// earlier time in a name (year 1 would read as no time at all) is not
// the store's.
const firstSetAsideYear = 2000

// FutureSlack is how far after now a set-aside copy's time may be and
// still count as set aside now (clocks of a machine drift): a copy dated
// later than that was named by a clock that was wrong, or comes from a
// directory copied from elsewhere, and its age is unknown.
const FutureSlack = 24 * time.Hour

// setAsideName matches the names the store gives a set-aside read model
// and its SQLite sidecars: read.sqlite.<kind>-<UTC time>[-wal|-shm].
var setAsideName = regexp.MustCompile(`^` + regexp.QuoteMeta(readModelFile) +
	`\.(unusable|before-rebuild|ahead-of-log)-(\d{8}T\d{6}\.\d{9}Z)(-wal|-shm)?$`)

// SetAsideName is the name the read model at path gets when the store
// sets it aside for kind at now (its sidecars add -wal and -shm).
func SetAsideName(path, kind string, now time.Time) string {
	return path + "." + kind + "-" + now.UTC().Format(setAsideTime)
}

// SetAsideFile is one file of a set-aside read model: the copy itself or
// one of its sidecars.
type SetAsideFile struct {
	Name  string    // its name in the store directory
	Copy  string    // the name of the copy it belongs to (Name without -wal/-shm)
	Kind  string    // KindUnusable, KindBeforeRebuild, KindAheadOfLog
	At    time.Time // when the store set it aside, from its name (UTC)
	Bytes int64
}

// SetAside sums a store directory's set-aside read models: how many
// copies (a copy and its sidecars count one), their bytes and when the
// oldest was set aside (zero: none).
type SetAside struct {
	Copies int
	Bytes  int64
	Oldest time.Time
	Files  []SetAsideFile // by name

	copies map[string]bool // the copies counted (add)
}

// ParseSetAside classifies the name of an entry of a store directory: ok
// only for a name the store gives a set-aside read model, with a time it
// could have written.
func ParseSetAside(name string) (f SetAsideFile, ok bool) {
	m := setAsideName.FindStringSubmatch(name)
	if m == nil {
		return SetAsideFile{}, false
	}
	at, err := time.Parse(setAsideTime, m[2])
	if err != nil || at.Year() < firstSetAsideYear {
		return SetAsideFile{}, false
	}
	return SetAsideFile{Name: name, Copy: strings.TrimSuffix(name, m[3]), Kind: m[1], At: at}, true
}

// ReadSetAside lists the set-aside read models in the store directory
// dir. Only regular files named as the store names them count: a
// directory or a symbolic link with such a name, and every other file,
// are not the store's and are left out. A directory that cannot be read
// is ErrStoreDirUnreadable; an entry removed while listed is left out.
func ReadSetAside(dir string) (SetAside, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return SetAside{}, fmt.Errorf("%w: %w", ErrStoreDirUnreadable, err)
	}
	var s SetAside
	for _, e := range entries {
		f, ok := ParseSetAside(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := os.Lstat(filepath.Join(dir, e.Name()))
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		f.Bytes = info.Size()
		s.add(f)
	}
	return s, nil
}

// add counts f in s (entries come by name, so a copy's files are
// neighbours only by chance: copies are counted by their name).
func (s *SetAside) add(f SetAsideFile) {
	if s.copies == nil {
		s.copies = map[string]bool{}
	}
	if !s.copies[f.Copy] {
		s.copies[f.Copy] = true
		s.Copies++
	}
	s.Bytes += f.Bytes
	if s.Oldest.IsZero() || f.At.Before(s.Oldest) {
		s.Oldest = f.At
	}
	s.Files = append(s.Files, f)
}

// OlderThan is the files of s set aside before cut. A copy dated in the
// future (FutureDated) is never among them: its age is unknown.
func (s SetAside) OlderThan(cut time.Time) []SetAsideFile {
	var out []SetAsideFile
	for _, f := range s.Files {
		if f.At.Before(cut) {
			out = append(out, f)
		}
	}
	return out
}

// FutureDated is the names of the copies of s dated more than
// FutureSlack after now, in name order: their age is unknown, so no age
// selects them; only their name does (Copy).
func (s SetAside) FutureDated(now time.Time) []string {
	var out []string
	for _, f := range s.Files {
		if f.At.After(now.Add(FutureSlack)) && !slices.Contains(out, f.Copy) {
			out = append(out, f.Copy)
		}
	}
	slices.Sort(out)
	return out
}

// Copy is the files of the copy named name (the copy and its -wal and
// -shm); none when s has no such copy.
func (s SetAside) Copy(name string) []SetAsideFile {
	var out []SetAsideFile
	for _, f := range s.Files {
		if f.Copy == name {
			out = append(out, f)
		}
	}
	return out
}

// ReadModels is n read models, in words: "1 read model", "2 read models".
func ReadModels(n int) string {
	if n == 1 {
		return "1 read model"
	}
	return fmt.Sprintf("%d read models", n)
}

// RemoveSetAside removes the set-aside file f from the store directory
// dir, once more checking that its name is the store's and that it is
// a regular file (not a link put there since it was listed); it returns
// ErrNotSetAside otherwise, and leaves the entry as it is. A removal the
// filesystem refuses is ErrSetAsideRemoveFailed.
func RemoveSetAside(dir string, f SetAsideFile) error {
	if _, ok := ParseSetAside(f.Name); !ok {
		return fmt.Errorf("%w: %s", ErrNotSetAside, f.Name)
	}
	path := filepath.Join(dir, f.Name)
	info, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSetAsideRemoveFailed, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%w: %s", ErrNotSetAside, f.Name)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("%w: %w", ErrSetAsideRemoveFailed, err)
	}
	return nil
}
