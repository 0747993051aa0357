package plaintext

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
)

var ledger = Ledger{Prefix: "pii-", Values: map[string]string{
	"pii-a1-1.1@mail.example": "a1",
	"pii-b2-1.2@mail.example": "b2",
	"pii-c3-1.3@mail.example": "c3",
}}

// TestHoldsFindsEveryValueWhereverItStands: values next to other value
// bytes (SQLite packs text columns without a separator) are found too;
// a value cut short is not.
func TestHoldsFindsEveryValueWhereverItStands(t *testing.T) {
	b := []byte("xpii-b2-1.2@mail.examplepii-a1-1.1@mail.example0 pii-c3-1.3@mail.exam pii-a1-1.1@mail.example")
	if got := ledger.Holds(b); !slices.Equal(got, []string{"a1", "b2"}) {
		t.Fatalf("holds %q", got)
	}
	if got := (Ledger{Values: ledger.Values}).Holds(b); got != nil {
		t.Fatalf("no prefix, holds %q", got)
	}
}

// TestScanSearchesEveryFileButTheSkippedOnesAndDecompressesSegments.
func TestScanSearchesEveryFileButTheSkippedOnesAndDecompressesSegments(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	write("keys.db", []byte("pii-a1-1.1@mail.example"))
	write("keys.db.rewrite", []byte("pii-a1-1.1@mail.example"))
	write("clean.db", []byte("hk1e:sealed"))
	write("sub/read.sqlite", []byte("\x00pii-c3-1.3@mail.example\x00"))
	seg := enc.EncodeAll([]byte("seg pii-b2-1.2@mail.example"), nil)
	write("segments/1.zst", seg)
	hits, err := Scan(dir, "keys.db", ledger)
	if err != nil {
		t.Fatal(err)
	}
	want := []Hit{
		{File: filepath.Join("segments", "1.zst"), Subjects: ledger.Holds(seg), Decompressed: []string{"b2"}},
		{File: filepath.Join("sub", "read.sqlite"), Subjects: []string{"c3"}},
	}
	if !slices.EqualFunc(hits, want, func(a, b Hit) bool {
		return a.File == b.File && slices.Equal(a.Subjects, b.Subjects) && slices.Equal(a.Decompressed, b.Decompressed)
	}) {
		t.Fatalf("hits %+v", hits)
	}
}
