package events

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
	_ "time/tzdata" // the DST vectors need zone data on any machine
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output")

const vectorsFile = "testdata/canonical_vectors.json"

type vector struct {
	Name      string          `json:"name"`
	Value     json.RawMessage `json:"value"`
	Canonical string          `json:"canonical,omitempty"`
	Hash      string          `json:"hash,omitempty"`
	SameAs    string          `json:"same_as,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// typedValue turns the vector file's typed JSON ({"int":"…"}, {"map":[[k,v]…]})
// into a Go value of the canonical set.
func typedValue(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		t.Fatalf("bad typed value %s", raw)
	}
	for kind, body := range m {
		return typedKind(t, kind, body)
	}
	return nil
}

func typedKind(t *testing.T, kind string, body json.RawMessage) any {
	var s string
	switch kind {
	case "null":
		return nil
	case "bool":
		var b bool
		mustJSON(t, body, &b)
		return b
	case "int":
		mustJSON(t, body, &s)
		i, err := strconv.ParseInt(s, 10, 64)
		must(t, err)
		return i
	case "float":
		mustJSON(t, body, &s)
		f, err := strconv.ParseFloat(s, 64)
		must(t, err)
		if s == "-0" {
			f = math.Copysign(0, -1)
		}
		return f
	case "str":
		mustJSON(t, body, &s)
		return s
	case "bytes":
		mustJSON(t, body, &s)
		b, err := hex.DecodeString(s)
		must(t, err)
		return string(b)
	case "time":
		mustJSON(t, body, &s)
		tm, err := time.Parse(time.RFC3339Nano, s)
		must(t, err)
		return tm
	case "time_in":
		var pair [2]string
		mustJSON(t, body, &pair)
		loc, err := time.LoadLocation(pair[1])
		must(t, err)
		tm, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", pair[0], loc)
		must(t, err)
		return tm
	case "list":
		var items []json.RawMessage
		mustJSON(t, body, &items)
		out := []any{}
		for _, it := range items {
			out = append(out, typedValue(t, it))
		}
		return out
	case "map":
		return typedMap(t, body)
	}
	t.Fatalf("unknown kind %q", kind)
	return nil
}

// typedMap builds a map from ordered pairs; a map literal cannot hold two
// keys equal only after NFC, so such pairs both land (distinct Go keys).
func typedMap(t *testing.T, body json.RawMessage) map[string]any {
	var pairs [][2]json.RawMessage
	mustJSON(t, body, &pairs)
	out := map[string]any{}
	for _, p := range pairs {
		var k string
		mustJSON(t, p[0], &k)
		out[k] = typedValue(t, p[1])
	}
	return out
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	must(t, json.Unmarshal(b, v))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func errCode(err error) string {
	for _, s := range []error{ErrNonFinite, ErrInvalidUTF8, ErrDuplicateKey, ErrTimeRange, ErrUnsupportedType, ErrIntRange} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "unexpected: " + err.Error()
}

// TestI17_GoldenVectors pins the canonical bytes and hash of every vector,
// checks that values declared equal (NFC/NFD, -0/0, offsets, sub-ms) hash
// equal, and that invalid values fail with their stable code.
func TestI17_GoldenVectors(t *testing.T) {
	raw, err := os.ReadFile(vectorsFile)
	must(t, err)
	var vs []vector
	must(t, json.Unmarshal(raw, &vs))
	if len(vs) < 40 {
		t.Fatalf("golden file has %d vectors, want >= 40", len(vs))
	}
	byName := map[string]*vector{}
	for i := range vs {
		checkVector(t, &vs[i])
		byName[vs[i].Name] = &vs[i]
	}
	for _, v := range vs {
		if v.SameAs != "" && byName[v.SameAs].Hash != v.Hash {
			t.Errorf("%s: hash %s, want equal to %s's %s", v.Name, v.Hash, v.SameAs, byName[v.SameAs].Hash)
		}
	}
	if *update {
		out, err := json.MarshalIndent(vs, "", " ")
		must(t, err)
		must(t, os.WriteFile(vectorsFile, append(out, '\n'), 0o644))
	}
}

func checkVector(t *testing.T, v *vector) {
	val := typedValue(t, v.Value)
	b, err := EncodeCanonical(val)
	if v.Error != "" || err != nil {
		if err == nil || errCode(err) != v.Error {
			t.Errorf("%s: error %v, want %s", v.Name, err, v.Error)
		}
		return
	}
	h := HashBytes(b)
	if *update {
		v.Canonical, v.Hash = string(b), h
	}
	if string(b) != v.Canonical || h != v.Hash {
		t.Errorf("%s: canonical %q hash %s, golden %q %s", v.Name, b, h, v.Canonical, v.Hash)
	}
	back, err := DecodeCanonical(b)
	if err != nil {
		t.Fatalf("%s: decode: %v", v.Name, err)
	}
	again, _ := EncodeCanonical(back)
	if string(again) != string(b) {
		t.Errorf("%s: decode/encode not stable: %q vs %q", v.Name, again, b)
	}
}

// randomValue draws from the whole canonical set, including NFD strings and
// times in other zones, for the property test.
func randomValue(r *rand.Rand, depth int) any {
	kinds := 8
	if depth > 3 {
		kinds = 6
	}
	switch r.IntN(kinds) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return int64(r.Uint64())
	case 3:
		return randomFloat(r)
	case 4:
		return randomString(r)
	case 5:
		return time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).In(time.FixedZone("z", (r.IntN(27)-12)*3600))
	case 6:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, depth+1)
		}
		return l
	}
	m := map[string]any{}
	for range r.IntN(4) {
		m[randomString(r)] = randomValue(r, depth+1)
	}
	return m
}

func randomFloat(r *rand.Rand) float64 {
	for {
		f := math.Float64frombits(r.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	}
}

func randomString(r *rand.Rand) string {
	runes := []rune{'a', 'Z', '0', ' ', 'é', 'e', '\u0301', 'ð', 'Å', '\u212b', '한', '\u1112', '\u1161', '\u11ab', '🛩', ';', ':', 's'}
	out := make([]rune, r.IntN(8))
	for i := range out {
		out[i] = runes[r.IntN(len(runes))]
	}
	return string(out)
}

// TestI17_PropertyEqualValuesHashEqual: for random values, encoding is
// deterministic, decode∘encode is the identity on canonical bytes, an NFD
// rendering of every string hashes like its NFC form, and a time hashes
// the same in every zone.
func TestI17_PropertyEqualValuesHashEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 17))
	for i := range 3000 {
		v := randomValue(r, 0)
		b1, err1 := EncodeCanonical(v)
		b2, err2 := EncodeCanonical(v)
		if (err1 == nil) != (err2 == nil) || string(b1) != string(b2) {
			t.Fatalf("case %d: nondeterministic encoding of %#v", i, v)
		}
		if err1 != nil {
			if !errors.Is(err1, ErrDuplicateKey) {
				t.Fatalf("case %d: unexpected error %v", i, err1)
			}
			continue
		}
		back, err := DecodeCanonical(b1)
		must(t, err)
		b3, err := EncodeCanonical(back)
		must(t, err)
		if string(b3) != string(b1) {
			t.Fatalf("case %d: decode/encode changed bytes", i)
		}
		b4, err := EncodeCanonical(decompose(v))
		if err != nil || string(b4) != string(b1) {
			t.Fatalf("case %d: NFD/zone-shifted form hashes differently (%v)", i, err)
		}
	}
}

// decompose rewrites every string and key to NFD and every time to UTC-7.
func decompose(v any) any {
	switch x := v.(type) {
	case string:
		return norm.NFD.String(x)
	case time.Time:
		return x.In(time.FixedZone("m7", -7*3600))
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = decompose(x[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			out[norm.NFD.String(k)] = decompose(val)
		}
		return out
	}
	return v
}

func TestCanonicalRejectsUnsupportedAndNonCanonicalInput(t *testing.T) {
	if _, err := EncodeCanonical(struct{}{}); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("struct: %v", err)
	}
	if _, err := EncodeCanonical(uint64(math.MaxUint64)); !errors.Is(err, ErrIntRange) {
		t.Errorf("uint64 max: %v", err)
	}
	for _, bad := range []string{"", "x", "i01;", "i-0;", "d1.0;", "d-0;", "d1e21;", "s3:ab", "s1:\xff",
		"s6:Cafe\u0301", "m2:s1:bi1;s1:ai1;", "m2:s1:ai1;s1:ai1;", "l1:", "T2024-01-02T03:04:05Z", "nn", "m1:i1;n", "l99999999999999999999:"} {
		if _, err := DecodeCanonical([]byte(bad)); !errors.Is(err, ErrMalformedCanonical) {
			t.Errorf("DecodeCanonical(%q) = %v, want ErrMalformedCanonical", bad, err)
		}
	}
}

// FuzzDecodeCanonical: arbitrary bytes never panic; anything accepted
// re-encodes to exactly the same bytes (one encoding per value).
func FuzzDecodeCanonical(f *testing.F) {
	for _, s := range []string{"n", "t", "i-5;", "d0.1;", "s3:abc", "T2024-01-02T03:04:05.678Z", "l2:ntm1:s1:ai1;"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeCanonical(b)
		if err != nil {
			return
		}
		again, err := EncodeCanonical(v)
		if err != nil || string(again) != string(b) {
			t.Fatalf("accepted %q but re-encodes to %q (%v)", b, again, err)
		}
		if s, ok := v.(string); ok && !utf8.ValidString(s) {
			t.Fatal("decoded invalid UTF-8")
		}
	})
}
