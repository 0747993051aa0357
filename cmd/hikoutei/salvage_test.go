package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

type salvItem struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name"`
}

// itemStore is a closed store of 800 items committed in 8 units.
func salvageItemStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[salvItem]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	for u := range 8 {
		unit := s.Begin()
		for i := u * 100; i < (u+1)*100; i++ {
			if err := unit.Persist(&salvItem{ID: fmt.Sprint(i), Name: fmt.Sprintf("item %d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := unit.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// destroy flips a byte of every copy, in log.db, of the records of seqs
// and returns the ids of the items they persisted.
func destroy(t *testing.T, dir string, seqs ...uint64) []string {
	t.Helper()
	path := filepath.Join(dir, events.LogFileName)
	l, err := events.OpenLog(path, events.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	recs := map[uint64][]byte{}
	var ids []string
	err = l.ReadFrom(seqs[0], func(e events.Event) error {
		for _, s := range seqs {
			if e.Seq == s {
				recs[s], err = events.MarshalRecord(e)
				ids = append(ids, e.Payload.(events.EntityPersisted).ID)
			}
		}
		return err
	})
	l.Close()
	if err != nil || len(recs) != len(seqs) {
		t.Fatalf("records %v: %v", seqs, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if !flipEvery(data, r) {
			t.Fatal("record not found in the file")
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return ids
}

func flipEvery(data, r []byte) bool {
	found := false
	for off := 0; ; {
		i := bytes.Index(data[off:], r)
		if i < 0 {
			return found
		}
		data[off+i+len(r)/2] ^= 0x40
		found, off = true, off+i+1
	}
}

// dirHash hashes every file of dir (names and contents).
func dirHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestRepro9_SalvageCommandRecoversADamagedStore(t *testing.T) {
	t.Parallel()
	src := salvageItemStore(t)
	lost := destroy(t, src, 300, 301, 302, 650)
	if code, out := runCLI(t, "doctor", "--dir", src); code != exitDamage || !strings.Contains(out, "seq 300-302, 650") {
		t.Fatalf("doctor exit %d:\n%s", code, out)
	}
	before := dirHash(t, src)
	to := filepath.Join(t.TempDir(), "salvaged")
	code, out := runCLI(t, "salvage", "--from", src, "--to", to)
	if code != exitDamage || !strings.Contains(out, "lost: 300-302, 650 (4 sequences; never reused)") {
		t.Fatalf("salvage exit %d:\n%s", code, out)
	}
	if dirHash(t, src) != before {
		t.Fatal("salvage wrote to the damaged store")
	}
	// A salvaged log has holes: doctor says so (exit 5), never "healthy".
	if code, out := runCLI(t, "doctor", "--dir", to); code != exitHoles || !strings.Contains(out, "seq 300-302, 650 were lost in the salvage") {
		t.Fatalf("doctor of the new store: exit %d:\n%s", code, out)
	}
	// The new store opens; its read model is rebuilt from the salvaged log.
	s, err := hikoutei.Open(t.Context(), to, hikoutei.Options{}, hikoutei.Entity[salvItem]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := range 800 {
		id := fmt.Sprint(i)
		_, err := hikoutei.Get[salvItem](ctx, s, id)
		wantLost := id == lost[0] || id == lost[1] || id == lost[2] || id == lost[3]
		if wantLost != errors.Is(err, hikoutei.ErrNotFound) || !wantLost && err != nil {
			t.Fatalf("item %s: %v (lost: %v)", id, err, lost)
		}
	}
}

func TestRepro9_SalvageRefusesTargetsThatAreNotNew(t *testing.T) {
	src := salvageItemStore(t)
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := dirHash(t, src) + dirHash(t, full)
	for _, to := range []string{full, src, filepath.Join(src, "snapshots", "new")} {
		if code, out := runCLI(t, "salvage", "--from", src, "--to", to); code != exitFailure || !strings.Contains(out, "salvage_target_invalid") {
			t.Errorf("--to %s: exit %d:\n%s", to, code, out)
		}
	}
	if dirHash(t, src)+dirHash(t, full) != before {
		t.Fatal("a refused salvage wrote something")
	}
	for _, args := range [][]string{{"salvage"}, {"salvage", "--from", src}, {"salvage", "--to", full}} {
		if code, _ := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

func TestRepro5_DoctorReportsDamagedPagesWithExitThree(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T, path string){
		"truncate 8192": func(t *testing.T, path string) {
			if err := os.Truncate(path, 8192); err != nil {
				t.Fatal(err)
			}
		},
		"branch page count": func(t *testing.T, path string) { setPageCounts(t, path, 0x01, 60000) },
		"leaf page count":   func(t *testing.T, path string) { setPageCounts(t, path, 0x02, 200) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			dir := salvageItemStore(t)
			damage(t, filepath.Join(dir, events.LogFileName))
			before := dirHash(t, dir)
			code, out := runCLI(t, "doctor", "--dir", dir)
			if code != exitDamage || !strings.Contains(out, "log_corrupt") || !strings.Contains(out, "doctor: damage found") {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			if code, out := runCLI(t, "doctor", "--dir", dir, "--json"); code != exitDamage || !strings.Contains(out, `"code":"log_corrupt"`) {
				t.Fatalf("json exit %d:\n%s", code, out)
			}
			if dirHash(t, dir) != before {
				t.Fatal("doctor wrote to the store")
			}
		})
	}
}

// setPageCounts sets the element count of every page of the given type
// (0x01 branch, 0x02 leaf) in the file, in use or free.
func setPageCounts(t *testing.T, path string, flags uint16, count uint16) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for off := 2 * 4096; off+16 <= len(data); off += 4096 {
		if uint16(data[off+8])|uint16(data[off+9])<<8 == flags {
			data[off+10], data[off+11] = byte(count), byte(count>>8)
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no page of type %#x", flags)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
