package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/disk"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// diskStatus is what the store keeps on disk and the space of the
// filesystem holding it (status's "disk").
type diskStatus struct {
	LogBytes       int64  `json:"log_bytes"`       // log.db, the hot log
	Segments       int    `json:"segments"`        // sealed segments the log vouches for (or files, see below)
	SegmentBytes   int64  `json:"segment_bytes"`   // their total
	SegmentsDir    string `json:"segments_dir"`    // where they live: relative to the store, or the redacted URL
	SegmentsScheme string `json:"segments_scheme"` // dir (a folder), or the object store's scheme (s3, gs, azblob, mem…)
	// SegmentsNote says why Segments and SegmentBytes are unknown (0):
	// outside the store's folder they come from log.db's manifest, which
	// cannot be read while a process holds the store.
	SegmentsNote string `json:"segments_note,omitempty"`
	// SegmentsMissing names the segments the log vouches for that the
	// store's segments folder lacks; SegmentStrays counts the files there
	// it does not vouch for (not in Segments). Read from log.db's manifest
	// when no process holds the store; else Segments counts the files.
	SegmentsMissing []string `json:"segments_missing,omitempty"`
	SegmentStrays   int      `json:"segment_strays,omitempty"`
	ReadModelBytes  int64    `json:"read_model_bytes"` // read.sqlite and its write-ahead log
	// FSFreeBytes and FSTotalBytes are the filesystem's space; absent, and
	// FSSpace "unknown", where the platform cannot tell it.
	FSFreeBytes  *uint64 `json:"fs_free_bytes,omitempty"`
	FSTotalBytes *uint64 `json:"fs_total_bytes,omitempty"`
	FSSpace      string  `json:"fs_space,omitempty"`
	// Warning is the disk health finding (Code disk_filling or disk_full);
	// absent while the filesystem has room.
	Warning string `json:"warning,omitempty"`
	Code    string `json:"warning_code,omitempty"`
	// SetAside counts the read models the store set aside and never
	// deletes (absent when none).
	SetAside *setAsideStatus `json:"set_aside,omitempty"`
}

// setAsideStatus is status's "disk.set_aside": how many read models the
// store set aside, their bytes (with their sidecars), when the oldest was
// set aside, the code and the command that lists and deletes them.
type setAsideStatus struct {
	Copies   int       `json:"copies"`
	Bytes    int64     `json:"bytes"`
	Oldest   time.Time `json:"oldest"`
	Code     string    `json:"code"` // read_model_set_aside
	NextStep string    `json:"next_step"`
	// FutureDated names the copies dated more than a day after this
	// machine's time: no --older-than selects them, only --copy NAME.
	FutureDated []string `json:"future_dated,omitempty"`
	dir         string   // the store directory, for the command that deletes one
}

// readDisk measures the store at dir with probe. One reading has no
// growth rate: status judges by the share used only (a running store's
// health also projects from its growth).
func readDisk(dir string, probe disk.Probe, now time.Time) (*diskStatus, error) {
	r, err := disk.NewMonitor(dir, probe).Check(now)
	if err != nil {
		return nil, fmt.Errorf("measure the store's files: %w", err)
	}
	d := &diskStatus{LogBytes: r.LogBytes, Segments: r.Segments, SegmentBytes: r.SegmentBytes, SegmentsDir: r.SegmentsDir,
		SegmentsScheme: segstore.SchemeDir, ReadModelBytes: r.ReadModelBytes}
	if s := r.SetAside; s.Copies > 0 {
		d.SetAside = &setAsideStatus{Copies: s.Copies, Bytes: s.Bytes, Oldest: s.Oldest, Code: disk.ErrReadModelSetAside.Error(),
			NextStep: fmt.Sprintf("hikoutei setaside --dir %s --older-than 720h --delete", shellWord(dir)), FutureDated: s.FutureDated(now), dir: dir}
	}
	if r.SpaceErr != nil {
		d.FSSpace = "unknown"
		return d, nil
	}
	d.FSFreeBytes, d.FSTotalBytes = &r.Space.Free, &r.Space.Total
	if r.Err != nil {
		d.Warning, d.Code = r.Err.Error(), diskCode(r.Err)
	}
	return d, nil
}

// segmentsElsewhere sets where d's segments live from the URL u (not
// the store's folder) and counts them from the manifest of dir's log,
// without reaching the segment store.
func (d *diskStatus) segmentsElsewhere(dir, u string) {
	parsed, err := segstore.Parse(u)
	if err != nil {
		return
	}
	loc := segstore.RedactedLocation(parsed)
	d.SegmentsDir, d.SegmentsScheme, d.Segments, d.SegmentBytes = loc.String(), loc.Scheme, 0, 0
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, OpenTimeout: logPeekTimeout})
	if err != nil {
		d.SegmentsNote = "count unknown: log.db cannot be read now (" + hikoutei.ErrorCode(err) + ")"
		return
	}
	defer l.Close()
	segs, err := l.Segments()
	if err != nil {
		d.SegmentsNote = "count unknown: " + hikoutei.ErrorCode(err)
		return
	}
	for _, s := range segs {
		d.Segments++
		d.SegmentBytes += s.Size
	}
}

// segmentsInFolder counts the segments dir's log vouches for apart
// from the strays of its segments folder, as the running store's health
// compares them (events.CompareSegments); the file count stays when
// log.db cannot be read: a process holds it.
func (d *diskStatus) segmentsInFolder(ctx context.Context, dir string) {
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, OpenTimeout: logPeekTimeout})
	if err != nil {
		return
	}
	defer l.Close()
	segs, err := l.Segments()
	if err != nil {
		return
	}
	listed, err := segstore.NewDir(filepath.Join(dir, events.SegmentsDir)).List(ctx)
	if err != nil {
		return
	}
	d.SegmentsMissing, d.SegmentStrays = events.CompareSegments(segs, listed)
	d.Segments, d.SegmentBytes = 0, 0 // the vouched ones present, not the strays' bytes
	for _, g := range segs {
		if !slices.Contains(d.SegmentsMissing, g.Name) {
			d.Segments++
			d.SegmentBytes += g.Size
		}
	}
}

// diskCode is the disk finding's stable code.
func diskCode(err error) string {
	for _, s := range []error{disk.ErrDiskFull, disk.ErrDiskFilling} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return ""
}

// printDisk writes the disk lines of status.
func printDisk(tw io.Writer, d *diskStatus) {
	if d == nil {
		return
	}
	fmt.Fprintf(tw, "hot log\tlog.db %s\n", byteText(d.LogBytes))
	switch {
	case d.SegmentsNote != "":
		fmt.Fprintf(tw, "sealed segments\tin %s (%s)\n", d.SegmentsDir, d.SegmentsNote)
	case d.SegmentsScheme == segstore.SchemeDir && !filepath.IsAbs(d.SegmentsDir):
		fmt.Fprintf(tw, "sealed segments\t%d in %s/, %s\n", d.Segments, d.SegmentsDir, byteText(d.SegmentBytes))
	default:
		fmt.Fprintf(tw, "sealed segments\t%d in %s, %s\n", d.Segments, d.SegmentsDir, byteText(d.SegmentBytes))
	}
	if d.SegmentStrays > 0 {
		fmt.Fprintf(tw, "segment strays\t%d files the log does not vouch for\n", d.SegmentStrays)
	}
	if len(d.SegmentsMissing) > 0 {
		fmt.Fprintf(tw, "SEGMENTS MISSING\t%d: %s\n", len(d.SegmentsMissing), strings.Join(d.SegmentsMissing, ", "))
	}
	fmt.Fprintf(tw, "read model\t%s\n", byteText(d.ReadModelBytes))
	if s := d.SetAside; s != nil {
		them := map[bool]string{true: "it", false: "them"}[s.Copies == 1]
		fmt.Fprintf(tw, "SET ASIDE\t%s: %s the store set aside and never deletes, %s, the oldest at %s; "+
			"inspect %s, then `%s` deletes those older than 30 days\n", s.Code, disk.ReadModels(s.Copies), byteText(s.Bytes),
			s.Oldest.Format(time.RFC3339), them, shown(s.NextStep))
		for _, name := range s.FutureDated {
			fmt.Fprintf(tw, "SET ASIDE FUTURE-DATED\t%s: dated after this machine's time, so no --older-than selects it; once "+
				"inspected, `hikoutei setaside --dir %s --copy %s --delete` deletes it\n", shown(name), shown(shellWord(s.dir)), shown(shellWord(name)))
		}
	}
	if d.FSFreeBytes == nil {
		fmt.Fprintln(tw, "filesystem free\tunknown (this platform cannot tell)")
	} else {
		fmt.Fprintf(tw, "filesystem free\t%s of %s\n", byteText(int64(*d.FSFreeBytes)), byteText(int64(*d.FSTotalBytes)))
	}
	if d.Warning != "" {
		fmt.Fprintf(tw, "DISK\t%s\n", d.Warning)
	}
}

// byteText is n bytes in the largest binary unit that keeps a whole
// number, with the exact count.
func byteText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	v, i := float64(n), 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s (%d bytes)", v, []string{"", "KiB", "MiB", "GiB", "TiB"}[i], n)
}
