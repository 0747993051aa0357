package events

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// guard runs fn with memory faults turned into panics (debug.SetPanicOnFault:
// bbolt reads its pages through a memory map, and a read past the end of a
// truncated file is a SIGBUS, not a panic), and turns a panic bbolt raises
// on a damaged file (a string, or a runtime error such as an index out of
// range, a nil dereference or a fault) into *LogCorruptError naming the
// page when the panic does. Other panic values, such as a failpoint's
// crash, go on.
func guard(what string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		switch r.(type) {
		case string, runtime.Error:
			msg := fmt.Sprint(r)
			err = &LogCorruptError{Check: CheckPanic, Page: pageInPanic(msg), Detail: what + ": bbolt panicked: " + msg}
		default:
			panic(r)
		}
	}()
	return fn()
}

var panicPage = regexp.MustCompile(`(?i)(?:page (?:expected to be: )?|pgid \()(\d+)`)

// pageInPanic is the page id a bbolt panic message names, or 0.
func pageInPanic(msg string) uint64 {
	m := panicPage.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	id, _ := strconv.ParseUint(m[1], 10, 64)
	return id
}

// guarded is guard for a Log: damage found in the file (a bbolt panic, or
// a sequence check failing on what bbolt returned) marks the log damaged,
// and it refuses appends from then on (writing into a damaged tree spreads
// the damage).
func (l *Log) guarded(what string, fn func() error) error {
	err := guard(what, fn)
	var ce *LogCorruptError
	if errors.As(err, &ce) {
		l.damage.CompareAndSwap(nil, ce)
	}
	return err
}

// openBolt opens path with bbolt after preflight checked, under the file
// lock, that bbolt can open it without panicking or faulting.
// growStep is how far past its data bbolt grows log.db once the file is
// over a step (bbolt's default, 16 MiB, leaves a small log mostly empty
// space). Each growth costs a truncate and an fsync: one per MiB of log.
const growStep = 1 << 20

func openBolt(path string, opts Options, opened ...*os.FileInfo) (*bolt.DB, error) {
	var file *os.File
	bo := &bolt.Options{Timeout: opts.OpenTimeout, NoSync: opts.NoSync, ReadOnly: opts.ReadOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			if err != nil {
				return nil, err
			}
			if err := preflight(f, !opts.ReadOnly, opts.OpenTimeout); err != nil {
				f.Close()
				return nil, err
			}
			file = f
			if len(opened) > 0 {
				*opened[0], _ = f.Stat() // the identity CheckFile compares the path with
			}
			return f, nil
		}}
	var db *bolt.DB
	err := guard("open", func() (err error) {
		db, err = bolt.Open(path, 0o600, bo)
		return err
	})
	if db != nil {
		db.AllocSize = growStep
	}
	if err != nil && file != nil {
		file.Close() // after a panic bbolt left it open (and locked); otherwise a no-op
	}
	return db, err
}

// preflight locks f as bbolt will (shared when read-only, within timeout:
// bolt's ErrTimeout otherwise) and checks what bbolt trusts when it opens
// a file: the meta pages, the file size against the high-water mark, the
// freelist, the root bucket page and the root page of every bucket. An
// empty file opened for writing is new: bbolt initialises it.
func preflight(f *os.File, exclusive bool, timeout time.Duration) error {
	if err := lockFile(f, exclusive, timeout); err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return corrupt(CheckFile, 0, "not a regular file")
	}
	if st.Size() == 0 && exclusive {
		return nil
	}
	bf, err := openBoltFile(f, st.Size())
	if err != nil {
		return err
	}
	return bf.checkOpen()
}

// checkOpen is the part of verification that runs at every open, cheap
// because it reads no leaf page but the root's: the freelist, the root
// page, and the skeleton of every bucket's tree (checkSkeleton).
func (f *boltFile) checkOpen() error {
	free, err := f.freelistIDs()
	if err != nil {
		return err
	}
	root, err := f.page(f.meta.root, f.meta.hwm)
	if err != nil {
		return err
	}
	elems, err := root.elements()
	if err != nil {
		return err
	}
	if root.flags != flagLeaf {
		return corrupt(CheckBucket, root.id, "the root bucket page is a branch: a log has five buckets")
	}
	return f.checkSkeleton(elems, free)
}
