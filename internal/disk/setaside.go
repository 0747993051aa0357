package disk

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
// is an error; an entry removed while listed is left out.
func ReadSetAside(dir string) (SetAside, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return SetAside{}, err
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

// OlderThan is the files of s set aside before cut.
func (s SetAside) OlderThan(cut time.Time) []SetAsideFile {
	var out []SetAsideFile
	for _, f := range s.Files {
		if f.At.Before(cut) {
			out = append(out, f)
		}
	}
	return out
}

// RemoveSetAside removes the set-aside file f from the store directory
// dir, once more checking that its name is the store's and that it is
// a regular file (not a link put there since it was listed); it returns
// ErrNotSetAside otherwise, and leaves the entry as it is.
func RemoveSetAside(dir string, f SetAsideFile) error {
	if _, ok := ParseSetAside(f.Name); !ok {
		return fmt.Errorf("%w: %s", ErrNotSetAside, f.Name)
	}
	path := filepath.Join(dir, f.Name)
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%w: %s", ErrNotSetAside, f.Name)
	}
	return os.Remove(path)
}
