package events

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// batchV1Payloads are the batches testdata/batch-v1 holds, appended in
// this order by the build before packed batches (schema 1): two that
// pack, two that do not (an id and a hash of another form, two attempts).
func batchV1Payloads() []Payload {
	return []Payload{
		EffectsClaimed{ClaimToken: "t1", Epoch: 1, Attempts: map[string]int64{"fx0006a94268c1567e": 1, "fx004934adbbf33660": 1}},
		EffectsApplied{ClaimToken: "t1", Via: "dispatch", Written: map[string]string{"fx0006a94268c1567e": "a59d2dc99dd704ad",
			"fx004934adbbf33660": "c97ae2c081dcf752"}},
		EffectsClaimed{ClaimToken: "t2", Epoch: 1, Attempts: map[string]int64{"fx0006a94268c1567e": 2, "fx1": 1}},
		EffectsApplied{ClaimToken: "t2", Via: "probe", Written: map[string]string{"fx1": "h1"}},
	}
}

// batchesOf reads the payloads of the dispatch stream's records, and the
// records' bytes.
func batchesOf(t *testing.T, l *Log) (got []Payload, raw [][]byte) {
	t.Helper()
	for _, e := range readAll(t, l, 1) {
		if IsDispatchStream(e.Stream) {
			got = append(got, e.Payload)
			raw = append(raw, rawRecord(t, l, e.Seq))
		}
	}
	return got, raw
}

// A log with schema-1 batch settlements (testdata/batch-v1, written by
// the build before) reads them as it did, and its records keep their
// bytes; this build appends the same batches packed where they pack (and
// smaller), which read back equal, and the chain verifies over both.
func TestBatchSettlementsOfSchema1ReadAsBeforeAndNewOnesArePacked(t *testing.T) {
	dir := t.TempDir()
	must(t, os.CopyFS(dir, os.DirFS("testdata/batch-v1")))
	must(t, os.Chmod(filepath.Join(dir, LogFileName), 0o600))
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	defer func() { _ = w.Close() }()
	want := batchV1Payloads()
	old, oldRaw := batchesOf(t, w.Log())
	if !reflect.DeepEqual(old, want) {
		t.Fatalf("the schema-1 batches read %#v", old)
	}
	for _, p := range want {
		_, err := w.Append(Unit{Streams: []StreamAppend{{Stream: DispatchStream("ss-1"), ExpectedVersion: AnyVersion, Events: []Event{{Payload: p}}}}})
		must(t, err)
	}
	got, raw := batchesOf(t, w.Log())
	if !reflect.DeepEqual(got, append(want, want...)) {
		t.Fatalf("read back %#v", got[len(want):])
	}
	for i := range want {
		packed := strings.Contains(string(raw[len(want)+i]), packedKey)
		if string(raw[i]) != string(oldRaw[i]) || packed != (i < 2) || packed && len(raw[len(want)+i]) >= len(raw[i]) {
			t.Fatalf("batch %d: packed %v, %d bytes (schema 1: %d)", i, packed, len(raw[len(want)+i]), len(raw[i]))
		}
	}
	fullVerify(t, w.Log(), nil)
}

// A packed string that does not read back (not base64url, a torn id, ids
// out of order, no attempt) fails the decode: never a batch that lists
// other effects.
func TestPackedBatchThatDoesNotReadIsMalformed(t *testing.T) {
	good := EffectsClaimed{ClaimToken: "t", Epoch: 1, Attempts: map[string]int64{"fx0000000000000001": 1, "fx0000000000000002": 1}}
	m, err := EncodePayload(good)
	must(t, err)
	good.compact("", 0, m)
	if p, err := DecodePayload(TypeEffectsClaimed, 2, cloneMap(m)); err != nil || !reflect.DeepEqual(p, good) {
		t.Fatalf("the packed batch reads %#v, %v", p, err)
	}
	bad := map[string]func(map[string]any){
		"not base64": func(m map[string]any) { m[packedKey] = "!!" },
		"torn":       func(m map[string]any) { m[packedKey] = m[packedKey].(string)[:12] },
		"unsorted": func(m map[string]any) {
			m[packedKey] = packedEncoding.EncodeToString([]byte{0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1})
		},
		"no attempt": func(m map[string]any) { delete(m, attemptKey) },
	}
	for name, spoil := range bad {
		c := cloneMap(m)
		spoil(c)
		if _, err := DecodePayload(TypeEffectsClaimed, 2, c); err == nil {
			t.Fatalf("%s: decoded", name)
		}
	}
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
