package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/disk"
)

// diskStatus is what the store keeps on disk and the space of the
// filesystem holding it (status's "disk").
type diskStatus struct {
	LogBytes       int64  `json:"log_bytes"`        // log.db, the hot log
	Segments       int    `json:"segments"`         // sealed segment files
	SegmentBytes   int64  `json:"segment_bytes"`    // their total
	SegmentsDir    string `json:"segments_dir"`     // where they live, relative to the store
	ReadModelBytes int64  `json:"read_model_bytes"` // read.sqlite and its write-ahead log
	// FSFreeBytes and FSTotalBytes are the filesystem's space; absent, and
	// FSSpace "unknown", where the platform cannot tell it.
	FSFreeBytes  *uint64 `json:"fs_free_bytes,omitempty"`
	FSTotalBytes *uint64 `json:"fs_total_bytes,omitempty"`
	FSSpace      string  `json:"fs_space,omitempty"`
	// Warning is the disk health finding (Code disk_filling or disk_full);
	// absent while the filesystem has room.
	Warning string `json:"warning,omitempty"`
	Code    string `json:"warning_code,omitempty"`
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
		ReadModelBytes: r.ReadModelBytes}
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
	fmt.Fprintf(tw, "sealed segments\t%d in %s/, %s\n", d.Segments, d.SegmentsDir, byteText(d.SegmentBytes))
	fmt.Fprintf(tw, "read model\t%s\n", byteText(d.ReadModelBytes))
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
