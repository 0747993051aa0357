package hikoutei

import (
	"fmt"
	"slices"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/disk"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// DiskSpace is the size of a filesystem and what is free on it, in bytes.
type DiskSpace struct {
	Free  uint64 // what the store's process may still use
	Total uint64
}

// DiskProbe tells the space of the filesystem holding a directory
// (Options.DiskProbe); the default asks the kernel (statfs). A test can
// answer a nearly full disk.
type DiskProbe interface {
	Space(dir string) (DiskSpace, error)
}

// diskProbe is p as the disk package's probe (nil: statfs).
func diskProbe(p DiskProbe) disk.Probe {
	if p == nil {
		return nil
	}
	return probeOf{p}
}

type probeOf struct{ p DiskProbe }

func (o probeOf) Space(dir string) (disk.Space, error) {
	s, err := o.p.Space(dir)
	return disk.Space(s), err
}

// DiskUsage is what a store keeps on disk and the space of the
// filesystem holding it (Store.Disk).
type DiskUsage struct {
	LogBytes int64 // log.db, the hot log
	// Segments counts the sealed segments the log vouches for that the
	// segment store lists (before the first presence check, the folder's
	// segment files); SegmentBytes the size of the folder's files.
	Segments     int
	SegmentBytes int64
	// SegmentsDir is where they live: the folder relative to the store
	// directory ("segments") by default, else the redacted location of
	// Options.Segments (a folder's path, or scheme://bucket/path), with
	// SegmentsScheme its scheme ("dir" for a folder, s3, gs, mem…).
	// Outside the default folder, Segments and SegmentBytes count what
	// the log's manifest vouches for (the store itself is not reached).
	SegmentsDir    string
	SegmentsScheme string
	// SegmentsMissing counts the segments the log vouches for that the
	// segment store did not list at the last presence check
	// (Store.SegmentsPresence); SegmentStrays the names it listed that the
	// log does not vouch for (leftovers, renamed or foreign files), which
	// Segments does not count.
	SegmentsMissing, SegmentStrays int
	ReadModelBytes                 int64 // read.sqlite and its write-ahead log
	// SetAsideCopies counts the read models the store set aside in its
	// directory (read.sqlite.unusable-…, .before-rebuild-…,
	// .ahead-of-log-…; a copy's -wal and -shm are part of it), never
	// deleted by the store; SetAsideBytes is their size with their
	// sidecars, SetAsideOldest when the oldest was set aside (zero: none).
	// `hikoutei setaside` lists and removes them (docs/operations.md).
	SetAsideCopies int
	SetAsideBytes  int64
	SetAsideOldest time.Time
	// Space is the filesystem's; SpaceKnown is false where the platform
	// cannot tell it (then nothing is projected).
	Space      DiskSpace
	SpaceKnown bool
	// Growth is the store's growth in bytes per second over the samples
	// the store took with its clock (up to a day's; 0: unknown, none or
	// shrinking); FullAt is when the filesystem fills at that growth
	// (zero: never).
	Growth float64
	FullAt time.Time
	// Warning is ErrDiskFilling or ErrDiskFull with the detail, nil while
	// the filesystem has room.
	Warning error
}

// Disk measures the store's files and the filesystem holding them now,
// records the store's size as a sample taken with the store's clock, and
// projects when the filesystem fills at the growth the samples show
// (docs/operations.md "Disk space"). Health does the same. Errors: I/O
// errors reading the store directory.
func (s *Store) Disk() (DiskUsage, error) {
	if s.disk == nil {
		return DiskUsage{}, ErrStoreClosed
	}
	r, err := s.disk.Check(s.e.Now())
	if err != nil {
		return DiskUsage{}, err
	}
	u := DiskUsage{LogBytes: r.LogBytes, Segments: r.Segments, SegmentBytes: r.SegmentBytes, SegmentsDir: r.SegmentsDir,
		SegmentsScheme: segstore.SchemeDir, ReadModelBytes: r.ReadModelBytes, Space: DiskSpace(r.Space), SpaceKnown: r.SpaceErr == nil,
		Growth: r.Growth, FullAt: r.FullAt, Warning: r.Err,
		SetAsideCopies: r.SetAside.Copies, SetAsideBytes: r.SetAside.Bytes, SetAsideOldest: r.SetAside.Oldest}
	s.vouched(&u)
	return u, s.elsewhere(&u)
}

// vouched counts in u the segments the manifest vouches for less those
// the last presence check did not find, and that check's strays (u is
// left as measured before a check answered).
func (s *Store) vouched(u *DiskUsage) {
	p := s.segp.get()
	segs, err := s.e.Log().Segments()
	if !p.Checked || err != nil {
		return
	}
	u.Segments, u.SegmentStrays = len(segs), p.Strays
	for _, g := range segs {
		if slices.Contains(p.Missing, g.Name) {
			u.Segments--
			u.SegmentsMissing++
		}
	}
}

// elsewhere fills u's segments from the log's manifest when they live
// outside the store directory's segments folder.
func (s *Store) elsewhere(u *DiskUsage) error {
	if s.segs == nil {
		return nil
	}
	loc := s.segs.Location()
	u.SegmentsDir, u.SegmentsScheme = loc.String(), loc.Scheme
	segs, err := s.e.Log().Segments()
	u.Segments, u.SegmentBytes = len(segs)-u.SegmentsMissing, 0
	for _, g := range segs {
		u.SegmentBytes += g.Size
	}
	return err
}

// diskHealth fills the disk part of h and its set-aside read models
// (nothing when the store directory cannot be read: Local says why).
func (s *Store) diskHealth(h *Health) {
	if u, err := s.Disk(); err == nil {
		h.Disk, h.DiskUsage, h.SetAside = u.Warning, &u, setAsideNotice(u)
	}
}

// setAsideNotice is ErrReadModelSetAside with what u counts of the set-aside read
// models (nil when none).
func setAsideNotice(u DiskUsage) error {
	if u.SetAsideCopies == 0 {
		return nil
	}
	them := map[bool]string{true: "it", false: "them"}[u.SetAsideCopies == 1]
	return fmt.Errorf("%w: %s set aside in the store directory, %d bytes, the oldest at %s; "+
		"inspect %s, then, with the store stopped, remove %s with `hikoutei setaside --dir DIR --older-than AGE --delete`", ErrReadModelSetAside,
		disk.ReadModels(u.SetAsideCopies), u.SetAsideBytes, u.SetAsideOldest.UTC().Format(time.RFC3339), them, them)
}
