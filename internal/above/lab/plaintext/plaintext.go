// Package plaintext searches a closed store's directory for personal
// values left in plaintext: the campaigns' check that the store keeps
// only sealed text (I37 for erased subjects).
package plaintext

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// A Hit is a file holding personal values: the subjects whose values its
// bytes hold, and those its zstd-decompressed bytes hold (.zst files).
type Hit struct {
	File         string   // relative to the directory searched
	Subjects     []string // distinct, sorted
	Decompressed []string // distinct, sorted
}

// A Ledger is the values to search for: each value (all starting with
// Prefix) mapped to its subject.
type Ledger struct {
	Prefix string
	Values map[string]string
}

// Scan searches every file below dir but those whose name starts with
// skip (the key file), .zst files also decompressed, for the ledger's
// values. A file removed meanwhile is passed over (NATS litter).
func Scan(dir, skip string, l Ledger) ([]Hit, error) {
	var hits []Hit
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), skip) {
			return gone(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return gone(err)
		}
		h := Hit{Subjects: l.Holds(b)}
		if strings.HasSuffix(d.Name(), ".zst") {
			if plain, err := Decompress(b); err == nil {
				h.Decompressed = l.Holds(plain)
			}
		}
		if len(h.Subjects)+len(h.Decompressed) > 0 {
			h.File, _ = filepath.Rel(dir, path)
			hits = append(hits, h)
		}
		return nil
	})
	return hits, err
}

// gone is err, nil when the file was removed meanwhile.
func gone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Holds is the subjects whose values b holds anywhere, distinct and
// sorted: at each place the prefix stands, every ledger value starting
// there.
func (l Ledger) Holds(b []byte) []string {
	if l.Prefix == "" {
		return nil
	}
	longest := 0
	for v := range l.Values {
		longest = max(longest, len(v))
	}
	var out []string
	for i := bytes.Index(b, []byte(l.Prefix)); i >= 0; {
		for end := i + len(l.Prefix); end <= min(len(b), i+longest); end++ {
			if s, ok := l.Values[string(b[i:end])]; ok && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		next := bytes.Index(b[i+1:], []byte(l.Prefix))
		if next < 0 {
			break
		}
		i += 1 + next
	}
	slices.Sort(out)
	return out
}

// Decompress is b, a zstd frame, decompressed.
func Decompress(b []byte) ([]byte, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return dec.DecodeAll(b, nil)
}
