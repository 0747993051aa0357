package events

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
)

// FuzzDecodeChainedRecord feeds arbitrary bytes, seeded with format-3
// records, to the decoders of a chained record: none panics; a record that
// decodes has a link exactly when it is of format 3; its replica form
// keeps its chain value; ChainNext agrees with the record's own link.
func FuzzDecodeChainedRecord(f *testing.F) {
	dir := f.TempDir()
	buildLog(f, dir, 5)
	l, err := OpenLog(filepath.Join(dir, LogFileName), Options{ReadOnly: true})
	if err != nil {
		f.Fatal(err)
	}
	err = l.ReadRecords(1, func(seq uint64, rec []byte) error { f.Add(seq, rec); return nil })
	l.Close()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint64(1), []byte{recordFormatChained})
	f.Fuzz(func(t *testing.T, seq uint64, b []byte) {
		e, err := DecodeRecord(seq, b)
		if err == nil && e.Link.IsZero() != (b[0] != recordFormatChained) {
			t.Fatalf("format %d decoded with link %v", b[0], e.Link)
		}
		c, ok, cerr := RecordChainValue(b)
		rf, rerr := ReplicaForm(b)
		if (cerr == nil) != (rerr == nil) {
			t.Fatalf("RecordChainValue: %v, ReplicaForm: %v", cerr, rerr)
		}
		if rerr == nil {
			c2, ok2, err := RecordChainValue(rf)
			if err != nil || ok2 != ok || c2 != c {
				t.Fatalf("the replica form's chain value %v/%v, the record's %v/%v (%v)", c2, ok2, c, ok, err)
			}
			if again, _ := ReplicaForm(rf); !bytes.Equal(again, rf) {
				t.Fatal("the replica form of a replica form differs")
			}
		}
		if ok {
			r, _ := parseRaw(0, b)
			next, err := ChainNext(r.h.Link, b)
			if err == nil && next != c || err != nil && !errors.Is(err, ErrChainBroken) && !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("ChainNext %v %v, the record's chain value %v", next, err, c)
			}
		}
	})
}
