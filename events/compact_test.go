//go:build failpoints

package events

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// compactableLog builds a log of n records, seals most of them (freeing
// pages in log.db) and closes it; it returns the store folder and the
// log's events.
func compactableLog(t *testing.T, n int) (string, []Event) {
	t.Helper()
	w := sealWriter(t, n)
	dir := filepath.Dir(w.Log().Path())
	head, err := w.Log().Head()
	must(t, err)
	_, err = w.Log().Seal(w.Fence(), head-10)
	must(t, err)
	must(t, w.Close())
	l, err := OpenLog(filepath.Join(dir, LogFileName), Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	return dir, readAll(t, l, 1)
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return sha256.Sum256(b)
}

// compactCrashing compacts dir with the failpoint spec armed; it returns
// the compaction's error, or the failpoint's crash as one.
func compactCrashing(t *testing.T, dir, spec string) (err error) {
	t.Helper()
	must(t, failpoint.Enable(spec))
	defer failpoint.Disable()
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(*failpoint.Crash)
			if !ok {
				panic(r)
			}
			err = c
		}
	}()
	_, err = Compact(context.Background(), dir, Options{})
	return err
}

func TestCompactShrinksTheLogKeepingEveryRecordAndTheChain(t *testing.T) {
	dir, all := compactableLog(t, 2000)
	path := filepath.Join(dir, LogFileName)
	rep, err := Compact(context.Background(), dir, Options{})
	must(t, err)
	fi, err := os.Stat(path)
	must(t, err)
	if rep.After >= rep.Before || fi.Size() != rep.After || fi.Mode().Perm() != 0o600 || rep.Head.Seq != all[len(all)-1].Seq {
		t.Fatalf("compact: %+v; log.db is %d bytes, mode %v", rep, fi.Size(), fi.Mode().Perm())
	}
	if _, err := os.Stat(path + CompactSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temporary copy stayed: %v", err)
	}
	l, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	if got := readAll(t, l, 1); !reflect.DeepEqual(got, all) {
		t.Fatal("the compacted log's events differ")
	}
	fullVerify(t, l, &rep.Head)
}

func TestCompactRefusesARunningStore(t *testing.T) {
	w := sealWriter(t, 50)
	dir := filepath.Dir(w.Log().Path())
	sum := fileSum(t, w.Log().Path())
	_, err := Compact(context.Background(), dir, Options{OpenTimeout: 50_000_000})
	if !errors.Is(err, ErrStoreLocked) {
		t.Fatalf("compact of a running store: %v", err)
	}
	if fileSum(t, w.Log().Path()) != sum {
		t.Fatal("a refused compaction changed log.db")
	}
	if _, err := os.Stat(w.Log().Path() + CompactSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused compaction wrote a copy: %v", err)
	}
}

func TestCompactACrashAtEachStepLeavesTheOriginalIntact(t *testing.T) {
	for _, spec := range []string{failpoint.CompactAfterCopy + "=panic", failpoint.CompactBeforeRename + "=panic"} {
		t.Run(spec, func(t *testing.T) {
			dir, all := compactableLog(t, 500)
			path := filepath.Join(dir, LogFileName)
			sum := fileSum(t, path)
			var crash *failpoint.Crash
			if err := compactCrashing(t, dir, spec); !errors.As(err, &crash) {
				t.Fatalf("the compaction did not stop at %s: %v", spec, err)
			}
			if fileSum(t, path) != sum {
				t.Fatal("log.db changed before the rename")
			}
			l, err := OpenLog(path, Options{ReadOnly: true})
			must(t, err)
			if got := readAll(t, l, 1); !reflect.DeepEqual(got, all) {
				t.Fatal("the events after the crash differ")
			}
			fullVerify(t, l, nil)
			must(t, l.Close())
			rep, err := Compact(context.Background(), dir, Options{})
			must(t, err)
			if !rep.ReplacedLeftover || rep.After >= rep.Before {
				t.Fatalf("the next compaction: %+v", rep)
			}
		})
	}
}

func TestCompactRefusesACopyThatDoesNotVerify(t *testing.T) {
	dir, _ := compactableLog(t, 300)
	segs, err := os.ReadDir(filepath.Join(dir, SegmentsDir))
	must(t, err)
	must(t, os.Remove(filepath.Join(dir, SegmentsDir, segs[0].Name())))
	path := filepath.Join(dir, LogFileName)
	sum := fileSum(t, path)
	if _, err := Compact(context.Background(), dir, Options{}); !errors.Is(err, ErrSegmentMissing) {
		t.Fatalf("compact with a segment missing: %v", err)
	}
	if fileSum(t, path) != sum {
		t.Fatal("a compaction that did not verify changed log.db")
	}
	if _, err := os.Stat(path + CompactSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unverified copy stayed: %v", err)
	}
}
