package replaytest

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// update rewrites the golden dumps from the committed logs:
//
//	go test ./replay_test/ -run TestGolden -update
var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the committed logs")

// Airport is the entity the recorded logs hold. Its shape is part of the
// recorded data: changing a field changes every golden dump (and the
// schema_v1 log's payloads name these fields), so regenerate both together.
type Airport struct {
	ID       string     `hikoutei:"id,pk"`
	Name     string     `hikoutei:"name"`
	City     string     `hikoutei:"city"`
	Country  string     `hikoutei:"country"`
	IATA     string     `hikoutei:"iata"`
	Lat      float64    `hikoutei:"latitude"`
	Lng      float64    `hikoutei:"longitude"`
	Altitude int64      `hikoutei:"altitude"`
	TZ       string     `hikoutei:"tz"`
	Notes    string     `hikoutei:"notes,user"`
	Checked  *time.Time `hikoutei:"checked"`
	Active   bool       `hikoutei:"active"`
}

func airportDef() hikoutei.EntityDef { return hikoutei.Entity[Airport]("Airport") }

// recordedLogs are the committed logs under testdata/logs/<name>/log.db.
var recordedLogs = []string{"airports", "schema_v1"}

func logDir(name string) string { return filepath.Join("testdata", "logs", name) }

func goldenPath(name string) string { return filepath.Join("testdata", "golden", name+".txt") }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// replayed replays the store directory dir into a fresh read model in a
// temp dir and returns its path and the checkpoint reached.
func replayed(t testing.TB, dir string) (string, uint64) {
	t.Helper()
	target := filepath.Join(t.TempDir(), hikoutei.ReadModelFile)
	cp, err := hikoutei.Replay(t.Context(), dir, target, hikoutei.ReplayOptions{}, airportDef())
	must(t, err)
	return target, cp
}

func dump(t testing.TB, readModel string) []byte {
	t.Helper()
	var b bytes.Buffer
	must(t, projector.Dump(readModel, &b))
	return b.Bytes()
}

func digest(t testing.TB, readModel string) string {
	t.Helper()
	d, err := projector.Digest(readModel)
	must(t, err)
	return d
}

// copyStore copies a committed log into a fresh store directory, so a test
// may open it for writing or damage it without touching testdata.
func copyStore(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(logDir(name), "log.db"))
	must(t, err)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "log.db"), data, 0o600))
	return dir
}

// compareGolden compares got (without its empty tables) with the golden
// file, or rewrites it under -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	got = withoutEmptyTables(got)
	if *update {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("dump differs from %s (run with -update if the change is intended):\n%s", path, lineDiff(want, got))
	}
}

// lineDiff lists the lines only in want (-) or only in got (+), in order,
// at most 40 of them: enough to see what changed without a diff library.
func lineDiff(want, got []byte) string {
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	inW, inG := map[string]int{}, map[string]int{}
	for _, l := range w {
		inW[string(l)]++
	}
	for _, l := range g {
		inG[string(l)]++
	}
	var out bytes.Buffer
	n := 0
	for _, l := range w {
		if inG[string(l)] == 0 && n < 40 {
			out.WriteString("- " + string(l) + "\n")
			n++
		}
	}
	for _, l := range g {
		if inW[string(l)] == 0 && n < 40 {
			out.WriteString("+ " + string(l) + "\n")
			n++
		}
	}
	return out.String()
}

// withoutEmptyTables drops the sections of tables that have no rows from
// a Dump. The goldens pin what a history puts into the read model; the
// column lists of tables it leaves empty (hk_outbox, hk_conflicts, … owned
// by other projections and still growing) are not part of that, so their
// migrations do not churn these goldens. Tables with rows keep their
// header, and a table that gains rows shows up in the diff.
func withoutEmptyTables(dump []byte) []byte {
	lines := strings.SplitAfter(string(dump), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "== ") &&
			(i+2 >= len(lines) || strings.HasPrefix(lines[i+2], "== ") || lines[i+2] == "") {
			i++ // skip the section title and its column header
			continue
		}
		out.WriteString(lines[i])
	}
	return []byte(out.String())
}

func TestWithoutEmptyTablesDropsOnlyEmptySections(t *testing.T) {
	in := "== a\n   x | y\n== b\n   x\n   i:1\n== c\n   z\n"
	if got := string(withoutEmptyTables([]byte(in))); got != "== b\n   x\n   i:1\n" {
		t.Fatalf("got %q", got)
	}
}

// rawRecord is a stored record parsed by the documented layout
// (events/record.go, format 1) without decoding its payload into a type:
// what the log holds, byte for byte, even for a type no build knows.
type rawRecord struct {
	Seq, Version, Epoch uint64
	Schema              uint32
	At                  time.Time
	Stream, Token       string
	Commit              string
	Type                events.Type
	Payload             []byte           // the canonical payload bytes as stored
	Bytes               []byte           // the whole record, checksum included
	Link                events.ChainHash // format 3: the chain value before the record
}

// parseRawRecord parses record bytes b stored under seq. It checks the
// format byte, the checksum, the lengths and that the record claims seq.
// Format 2 is format 1 with the (hex) token stored as the bytes it spells;
// format 3 is 3, a 32-byte chain link, then a format-1 or -2 body.
func parseRawRecord(seq uint64, b []byte) (rawRecord, error) {
	if len(b) < 1+8 {
		return rawRecord{}, fmt.Errorf("seq %d: truncated record", seq)
	}
	body := b[:len(b)-8]
	if binary.LittleEndian.Uint64(b[len(body):]) != xxhash.Sum64(body) {
		return rawRecord{}, fmt.Errorf("seq %d: checksum mismatch", seq)
	}
	var link events.ChainHash
	if body[0] == 3 && len(body) > 1+len(link) {
		copy(link[:], body[1:])
		body = body[1+len(link):]
	}
	if body[0] != 1 && body[0] != 2 {
		return rawRecord{}, fmt.Errorf("seq %d: record format %d", seq, body[0])
	}
	rest := body[1:]
	var bad bool
	uv := func() uint64 {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			bad = true
			return 0
		}
		rest = rest[n:]
		return v
	}
	str := func() []byte {
		n := uv()
		if bad || n > uint64(len(rest)) {
			bad = true
			return nil
		}
		out := rest[:n]
		rest = rest[n:]
		return out
	}
	r := rawRecord{Bytes: bytes.Clone(b), Link: link}
	r.Seq, r.Version = uv(), uv()
	r.Schema = uint32(uv())
	r.Epoch = uv()
	at, n := binary.Varint(rest)
	if n <= 0 {
		return rawRecord{}, fmt.Errorf("seq %d: bad time", seq)
	}
	rest = rest[n:]
	r.At = time.Unix(0, at).UTC()
	r.Stream, r.Type = string(str()), events.Type(str())
	r.Token, r.Commit = string(str()), string(str())
	if body[0] == 2 {
		r.Token = hex.EncodeToString([]byte(r.Token))
	}
	r.Payload = bytes.Clone(str())
	if bad || len(rest) != 0 {
		return rawRecord{}, fmt.Errorf("seq %d: malformed record", seq)
	}
	if r.Seq != seq {
		return rawRecord{}, fmt.Errorf("record under seq %d claims seq %d", seq, r.Seq)
	}
	return r, nil
}

// seqKey is the bbolt key of seq in the log's events bucket.
func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// rawRecords returns every record of the log in store directory dir, in
// seq order, parsed with parseRawRecord (read through bbolt, read-only).
func rawRecords(t testing.TB, dir string) []rawRecord {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, events.LogFileName), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	must(t, err)
	defer db.Close()
	var out []rawRecord
	must(t, db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("events")).ForEach(func(k, v []byte) error {
			r, err := parseRawRecord(binary.BigEndian.Uint64(k), v)
			out = append(out, r)
			return err
		})
	}))
	return out
}

// The one record of the committed logs whose type no build ever defined:
// schema_v1's "audit.note" (seq unknownSeq, stream auditStream, version 1,
// schema 1, payload {text}). The event catalogue has no such type, and an
// unknown type is a typed error, never skipped: replaying or opening that
// log as recorded fails at this record with *events.PayloadError wrapping
// events.ErrUnknownEventType (TestSchemaV1UnknownEventTypeFailsReplay).
//
// Every replay of that log (golden, determinism, damage, live store,
// generator) runs on a copy made by replayableCopy, in which this single
// record is rewritten into neutralEvent: an event of the catalogue the
// projector projects to nothing, with the record's own seq, stream,
// version, at, epoch, token and commit. Every other record stays byte for
// byte as recorded. See doc.go and testdata/README.md.
const auditNoteType events.Type = "audit.note"

const (
	auditStream = "audit/1"
	unknownLog  = "schema_v1"
	unknownSeq  = 7
)

// neutralPayload replaces the audit.note payload in replayable copies: a
// schema.declared with no entities. The projector projects schema.declared
// to nothing (projector.applyEntity: the shapes live in the log); the
// declared shapes are read from the schema stream (events.SchemaStream)
// only, and this event stays on auditStream, so it declares nothing either.
// The schema_v1 log declares no entities (its old build wrote events
// directly), so "no entities" is also what that log already declares.
var neutralPayload = events.SchemaDeclared{}

// neutralEvent is the catalogue event that replaces raw r (the audit.note
// record) in a replayable copy: same envelope, neutralPayload.
func neutralEvent(r rawRecord) events.Event {
	return events.Event{Seq: r.Seq, Stream: r.Stream, Version: r.Version, At: r.At, Epoch: r.Epoch,
		Token: r.Token, Commit: r.Commit, Payload: neutralPayload, Link: r.Link}
}

// replayableCopy copies the committed log name into a fresh store
// directory in t.TempDir() and, for the log holding the unknown record,
// rewrites that record (see unknownSeq) so that the copy replays.
func replayableCopy(t testing.TB, name string) string {
	t.Helper()
	dir := copyStore(t, name)
	if name == unknownLog {
		neutralizeUnknownRecord(t, dir)
	}
	return dir
}

// replayable returns a store directory from which the committed log name
// replays: the committed directory itself, or for the log holding the
// unknown record, a replayableCopy.
func replayable(t testing.TB, name string) string {
	t.Helper()
	if name == unknownLog {
		return replayableCopy(t, name)
	}
	return logDir(name)
}

// canonicalMap decodes the canonical payload bytes of r.
func canonicalMap(t testing.TB, r rawRecord) map[string]any {
	t.Helper()
	v, err := events.DecodeCanonical(r.Payload)
	must(t, err)
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("seq %d: payload is %T, not a map", r.Seq, v)
	}
	return m
}

// revisionsAny is revs as a canonical map decodes it (int64 values).
func revisionsAny(revs map[string]uint64) map[string]any {
	out := make(map[string]any, len(revs))
	for k, v := range revs {
		out[k] = int64(v)
	}
	return out
}

// neutralizeUnknownRecord rewrites the audit.note record of the log in dir
// through bbolt into neutralEvent, re-encoded with events.MarshalRecord (a
// valid checksum). It checks that the record is the expected one before,
// and after that the new record keeps every envelope field and decodes.
func neutralizeUnknownRecord(t testing.TB, dir string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, events.LogFileName), 0o600, &bolt.Options{Timeout: time.Second})
	must(t, err)
	defer db.Close()
	must(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		old, err := parseRawRecord(unknownSeq, b.Get(seqKey(unknownSeq)))
		if err != nil {
			return err
		}
		if old.Type != auditNoteType || old.Stream != auditStream || old.Version != 1 || old.Schema != 1 {
			return fmt.Errorf("seq %d is %s v%d %s schema %d, not the audit.note record", unknownSeq, old.Stream, old.Version, old.Type, old.Schema)
		}
		rec, err := events.MarshalRecord(neutralEvent(old))
		if err != nil {
			return err
		}
		nw, err := parseRawRecord(unknownSeq, rec)
		if err != nil {
			return err
		}
		if nw.Seq != old.Seq || nw.Stream != old.Stream || nw.Version != old.Version || !nw.At.Equal(old.At) ||
			nw.Epoch != old.Epoch || nw.Token != old.Token || nw.Commit != old.Commit || nw.Type != events.TypeSchemaDeclared {
			return fmt.Errorf("rewritten record %+v does not keep the envelope of %+v", nw, old)
		}
		if _, err := events.DecodeRecord(unknownSeq, rec); err != nil {
			return err
		}
		return b.Put(seqKey(unknownSeq), rec)
	}))
}
