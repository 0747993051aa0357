package crash

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// sealedErasedStore makes a store with two Items carrying personal
// values, erases the first subject, seals all but the newest records and
// closes it; the checker has seen the PII and ERASED lines.
func sealedErasedStore(t *testing.T) *checker {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	c := &campaign{out: io.Discard, res: Result{Failpoints: map[string]int{}}}
	k := newChecker(dir, c)
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{}, Entity())
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"a1", "b2"} {
		v := piiPrefix + id + "-1." + string(rune('1'+i)) + "@mail.example"
		k.personal.value(id, v)
		u := s.Begin()
		if err := u.Persist(&Item{ID: id, Name: "n", Email: v}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Erase(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	k.personal.erasedAck("a1")
	if _, err := s.Seal(ctx, hikoutei.SealOptions{Keep: 1, MinBatch: 1}); err != nil {
		t.Fatal(err)
	}
	if err := k.checkPersonal(ctx, s, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestI37_TheCampaignsChecksPassOnAStoreWithErasuresAndSeals: the checks
// after a kill find nothing on a healthy store (the erased subject reads
// the marker, no file holds a value in plaintext, I38 holds).
func TestI37_TheCampaignsChecksPassOnAStoreWithErasuresAndSeals(t *testing.T) {
	k := sealedErasedStore(t)
	if err := k.checkStoreFiles(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if len(k.c.res.Problems) != 0 || k.segments != 1 {
		t.Fatalf("segments %d, problems %v", k.segments, k.c.res.Problems)
	}
}

// TestI37_TheCampaignFindsAnErasedSubjectsPlaintextInAnyFile: a value of
// the erased subject in any file but keys.db (compressed or not) is an
// I37 mismatch; one of a subject not erased is a mismatch too (the store
// keeps only sealed text).
func TestI37_TheCampaignFindsAnErasedSubjectsPlaintextInAnyFile(t *testing.T) {
	k := sealedErasedStore(t)
	leak := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(k.dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	leak("keys.db.rewrite", []byte("x "+piiPrefix+"a1-1.1@mail.example y")) // the key file's: not searched
	if err := k.scanPlaintext(1); err != nil || len(k.c.res.Problems) != 0 {
		t.Fatalf("%v %v", err, k.c.res.Problems)
	}
	leak("snapshots/leak.sqlite", []byte("\x00"+piiPrefix+"a1-1.1@mail.example\x00"+piiPrefix+"b2-1.2@mail.example"))
	if err := k.scanPlaintext(1); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(k.c.res.Problems, "\n")
	if k.c.res.Mismatches != 2 || !strings.Contains(got, "I37") || !strings.Contains(got, "erased subject a1") {
		t.Fatalf("mismatches %d:\n%s", k.c.res.Mismatches, got)
	}
}

// TestI38_TheCampaignFindsARecordInTwoPlacesOrInNone: the placement check
// counts every sequence up to the highest: none is lost, two are
// duplicates.
func TestI38_TheCampaignFindsARecordInTwoPlacesOrInNone(t *testing.T) {
	c := &campaign{out: io.Discard, res: Result{Failpoints: map[string]int{}}}
	k := newChecker("", c)
	k.countPlaces(1, map[uint64]int{1: 1, 2: 2, 4: 1})
	if c.res.Lost != 1 || c.res.Duplicates != 1 {
		t.Fatalf("lost %d duplicates %d: %v", c.res.Lost, c.res.Duplicates, c.res.Problems)
	}
}

// TestI38_TheCampaignReadsASegmentsRecordsAndRefusesATruncatedOne: the
// campaign parses segments itself (not through the code under test).
func TestI38_TheCampaignReadsASegmentsRecordsAndRefusesATruncatedOne(t *testing.T) {
	body := []byte{2, 'i', 'd', 5, 1, 'x', 6, 2, 'y', 'z'}
	seqs, err := parseSegment(body, 2)
	if err != nil || len(seqs) != 2 || seqs[0] != 5 || seqs[1] != 6 {
		t.Fatalf("%v %v", seqs, err)
	}
	if _, err := parseSegment(body[:len(body)-1], 2); err == nil {
		t.Fatal("a truncated record was read")
	}
	if _, err := parseSegment(body, 3); err == nil {
		t.Fatal("a segment with fewer records than its seal recorded was read")
	}
}

// TestI37_TheCampaignFindsAnErasedSubjectThatReadsAValue: a subject whose
// Erase returned (ERASED) must read the marker; one that reads a value is
// an I37 mismatch, and so is a value the workload never wrote.
func TestI37_TheCampaignFindsAnErasedSubjectThatReadsAValue(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := &campaign{out: io.Discard, res: Result{Failpoints: map[string]int{}}}
	k := newChecker(dir, c)
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{}, Entity())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u := s.Begin()
	for _, it := range []*Item{{ID: "a1", Email: piiPrefix + "a1-1.1@mail.example"}, {ID: "b2", Email: piiPrefix + "b2-1.9@mail.example"}} {
		if err := u.Persist(it); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	k.personal.value("a1", piiPrefix+"a1-1.1@mail.example")
	k.personal.erasedAck("a1") // the child said ERASED, the store did not erase
	if err := k.checkPersonal(ctx, s, 1); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(c.res.Problems, "\n")
	if c.res.Mismatches != 2 || !strings.Contains(got, "I37: erased subject a1") || !strings.Contains(got, "b2 reads a personal value the workload never wrote") {
		t.Fatalf("mismatches %d:\n%s", c.res.Mismatches, got)
	}
}
