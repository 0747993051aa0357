package replication

import (
	"bytes"
	"errors"
	"testing"
)

func TestCommitEncodingRoundTripsAndRejectsDamage(t *testing.T) {
	cases := [][][]byte{nil, {{}}, {[]byte("a")}, {[]byte("first"), {}, bytes.Repeat([]byte{7}, 300)}}
	for _, recs := range cases {
		got, err := DecodeCommit(EncodeCommit(recs))
		if err != nil {
			t.Fatalf("decode %q: %v", recs, err)
		}
		if len(got) != len(recs) {
			t.Fatalf("decoded %d records, want %d", len(got), len(recs))
		}
		for i := range recs {
			if !bytes.Equal(got[i], recs[i]) {
				t.Fatalf("record %d: %q, want %q", i, got[i], recs[i])
			}
		}
	}
	body := EncodeCommit([][]byte{[]byte("first"), []byte("second")})
	for _, bad := range [][]byte{nil, {9}, body[:len(body)-1], append(bytes.Clone(body), 0), {commitFormat, 200}} {
		if _, err := DecodeCommit(bad); !errors.Is(err, ErrCorruptCommit) {
			t.Fatalf("DecodeCommit(%v) = %v, want ErrCorruptCommit", bad, err)
		}
	}
}

func TestMsgIDNamesPositionAndContent(t *testing.T) {
	a, b := EncodeCommit([][]byte{[]byte("a")}), EncodeCommit([][]byte{[]byte("b")})
	if first, again := MsgID(5, a), MsgID(5, a); first != again {
		t.Fatal("the same commit at the same position must have one idempotency key")
	}
	if MsgID(5, a) == MsgID(6, a) || MsgID(5, a) == MsgID(5, b) {
		t.Fatal("another position or another content must have another key")
	}
}
