package disk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Store file names, as the events and engine packages name them.
const (
	logFile       = "log.db"
	readModelFile = "read.sqlite"
	// SegmentsDir is the store's folder of sealed segments (relative).
	SegmentsDir = "segments"
	segmentExt  = ".seg.zst"
)

// Files is what a store keeps on disk, in bytes: its hot log (log.db),
// its sealed segments (count and total, in SegmentsDir) and its read
// model (read.sqlite and its write-ahead log), and the read models it
// set aside (SetAside).
type Files struct {
	LogBytes       int64
	Segments       int
	SegmentBytes   int64
	SegmentsDir    string
	ReadModelBytes int64
	// ReadModelWALBytes is the part of ReadModelBytes that is
	// read.sqlite's write-ahead log: bounded by the store (about 32 MiB
	// under a bulk load) and removed when it closes.
	ReadModelWALBytes int64
	SetAside          SetAside
}

// Total is the bytes of all the store's files counted: a read model set
// aside still takes its space, so setting one aside is no shrinking.
func (f Files) Total() int64 {
	return f.LogBytes + f.SegmentBytes + f.ReadModelBytes + f.SetAside.Bytes
}

// Lasting is Total without read.sqlite's write-ahead log: what the
// store's growth is measured on. The log jumps to its bound within a
// second of a bulk load and back to nothing when the store closes; taken
// as growth, one such jump in a sample window read as gigabytes a day.
func (f Files) Lasting() int64 {
	return f.Total() - f.ReadModelWALBytes
}

// ReadFiles measures the store directory dir; a file that is absent
// counts zero (a store with nothing sealed has no segments folder).
func ReadFiles(dir string) (Files, error) {
	f := Files{SegmentsDir: SegmentsDir}
	var err error
	if f.LogBytes, err = size(filepath.Join(dir, logFile)); err != nil {
		return f, err
	}
	if f.ReadModelBytes, err = size(filepath.Join(dir, readModelFile)); err != nil {
		return f, err
	}
	if f.ReadModelWALBytes, err = size(filepath.Join(dir, readModelFile+"-wal")); err != nil {
		return f, err
	}
	f.ReadModelBytes += f.ReadModelWALBytes
	if f.SetAside, err = ReadSetAside(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	return f, readSegments(filepath.Join(dir, SegmentsDir), &f)
}

// readSegments counts the segment files in dir (absent: none).
func readSegments(dir string, f *Files) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), segmentExt) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed while listed
		}
		f.Segments++
		f.SegmentBytes += info.Size()
	}
	return nil
}

// size is the size of the file at path (0 when absent, or a symbolic
// link that loops: no file's bytes, and what the link is, the commands
// that read it say).
func size(path string) (int64, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ELOOP) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}
