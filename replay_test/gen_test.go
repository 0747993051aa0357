package replaytest

// The generator of the committed logs. It runs only when asked:
//
//	go test ./replay_test/ -run TestGenerateLogs -generate
//	go test ./replay_test/ -run TestGolden -update
//
// The first command rewrites testdata/logs/<name>/log.db, the second the
// golden dumps from them; commit both. Everything the generator controls is
// fixed (manual clock, fixed data, fixed order), but every log carries values
// minted at run time — store id, writer ids, fencing tokens, host name and
// pid of the generating process — so a regenerated log differs from the
// committed one in those values and the goldens must be rewritten with it.
// The tests never regenerate: they replay the committed files.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

var generate = flag.Bool("generate", false, "rewrite the committed logs in testdata/logs (then run -update)")

// maxLogSize keeps committed logs small.
const maxLogSize = 200 << 10

func TestGenerateLogs(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/logs")
	}
	for name, gen := range map[string]func(*testing.T, string){
		"airports":  genAirports,
		"schema_v1": genSchemaV1,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			gen(t, dir)
			dst := filepath.Join(logDir(name), "log.db")
			must(t, os.MkdirAll(filepath.Dir(dst), 0o755))
			compactInto(t, filepath.Join(dir, "log.db"), dst)
		})
	}
}

// TestGeneratorReproducesCommittedLogs runs the generator into a temp dir
// (testdata is not touched) and checks that its replay equals the golden
// of the committed log, up to the values minted at run time (store id,
// writer ids, host, pid): the committed logs are what this generator makes.
// As for the committed schema_v1 log, its audit.note record is rewritten
// before the replay (see unknownSeq); the generator still writes it.
func TestGeneratorReproducesCommittedLogs(t *testing.T) {
	for name, gen := range map[string]func(*testing.T, string){"airports": genAirports, "schema_v1": genSchemaV1} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			gen(t, dir)
			if name == unknownLog {
				neutralizeUnknownRecord(t, dir)
			}
			rm, _ := replayed(t, dir)
			want, err := os.ReadFile(goldenPath(name))
			must(t, err)
			got, wantN := normalizeMinted(withoutEmptyTables(dump(t, rm))), normalizeMinted(want)
			if !bytes.Equal(got, wantN) {
				t.Fatalf("generator output differs from the committed %s (regenerate with -generate, then -update):\n%s", name, lineDiff(wantN, got))
			}
		})
	}
}

// normalizeMinted replaces the values a log mints at run time in a dump:
// the store id, writer ids (numbered by first appearance), host and pid.
func normalizeMinted(dump []byte) []byte {
	writers := map[string]string{}
	writer := func(v string) string {
		if _, ok := writers[v]; !ok {
			writers[v] = fmt.Sprintf("t:\"<writer %d>\"", len(writers)+1)
		}
		return writers[v]
	}
	var section string
	lines := strings.Split(string(dump), "\n")
	for i, line := range lines {
		if name, ok := strings.CutPrefix(line, "== "); ok {
			section = name
			continue
		}
		cells := strings.Split(line, " | ")
		switch {
		case section == "hk_meta" && len(cells) == 2 && cells[0] == `   t:"store_id"`:
			cells[1] = `t:"<store id>"`
		case section == "hk_lease" && len(cells) == 9 && !strings.HasPrefix(cells[0], "   role"):
			cells[1], cells[4], cells[5] = writer(cells[1]), `t:"<host>"`, "i:<pid>"
		case section == "hk_lease_history" && len(cells) == 7 && !strings.HasPrefix(cells[0], "   seq"):
			cells[3] = writer(cells[3])
		}
		lines[i] = strings.Join(cells, " | ")
	}
	return []byte(strings.Join(lines, "\n"))
}

// compactInto copies the bbolt file src into dst with bbolt's compaction,
// which drops free pages: the committed file holds only live data.
func compactInto(t *testing.T, src, dst string) {
	t.Helper()
	tmp := dst + ".tmp"
	from, err := bolt.Open(src, 0o600, &bolt.Options{ReadOnly: true})
	must(t, err)
	defer from.Close()
	to, err := bolt.Open(tmp, 0o644, nil)
	must(t, err)
	must(t, bolt.Compact(to, from, 0))
	must(t, to.Close())
	st, err := os.Stat(tmp)
	must(t, err)
	if st.Size() > maxLogSize {
		t.Fatalf("%s would be %d bytes (limit %d)", dst, st.Size(), maxLogSize)
	}
	must(t, os.Rename(tmp, dst))
	t.Logf("wrote %s (%d bytes)", dst, st.Size())
}

type jsonAirport struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	City      string  `json:"city"`
	Country   string  `json:"country"`
	IATA      string  `json:"iata"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Altitude  int64   `json:"altitude"`
	TZ        string  `json:"tz"`
}

// readAirports returns the first n airports of the project's data set.
func readAirports(t *testing.T, n int) []Airport {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "data", "airports.json"))
	must(t, err)
	var raw []jsonAirport
	must(t, json.Unmarshal(data, &raw))
	out := make([]Airport, n)
	for i, r := range raw[:n] {
		out[i] = Airport{ID: fmt.Sprint(r.ID), Name: r.Name, City: r.City, Country: r.Country, IATA: r.IATA,
			Lat: r.Latitude, Lng: r.Longitude, Altitude: r.Altitude, TZ: r.TZ}
	}
	return out
}

var genStart = time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)

// genStep is how far the manual clock moves between commits: below half
// the lease TTL, so the writer renews its lease on the way (renewals are not
// events) and it never expires.
const genStep = 10 * time.Second

// genAirports writes the "airports" log through the public API: 50
// airports from the data set in two units, then updates, unchanged
// persists, a close and reopen (a second lease epoch), removes, a
// re-create and a mixed unit. It checks every commit's event count, so the
// log holds exactly the history described here.
func genAirports(t *testing.T, dir string) {
	ctx := context.Background()
	clock := events.NewManualClock(genStart)
	open := func() *hikoutei.Store {
		s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Clock: clock, Operation: "gen-airports", HeartbeatInterval: -1, AcquireWait: -1}, airportDef())
		must(t, err)
		return s
	}
	unit := func(s *hikoutei.Store, wantEvents int, persist []*Airport, remove []*Airport) {
		t.Helper()
		clock.Advance(genStep)
		u := s.Begin()
		for _, a := range persist {
			must(t, u.Persist(a))
		}
		for _, a := range remove {
			must(t, u.Remove(a))
		}
		res, err := u.Commit(ctx)
		must(t, err)
		if res.Events != wantEvents {
			t.Fatalf("commit %+v: %d events, want %d", res, res.Events, wantEvents)
		}
	}
	all := readAirports(t, 50)
	byID := map[string]*Airport{}
	var ptrs []*Airport
	for i := range all {
		a := &all[i]
		byID[a.ID], ptrs = a, append(ptrs, a)
		a.Active = i%2 == 1
		if i%5 == 0 { // nanoseconds: stored truncated to milliseconds
			at := genStart.Add(-time.Duration(i+1)*24*time.Hour + 123456789)
			a.Checked = &at
		}
	}
	at := func(d time.Duration) *time.Time { v := genStart.Add(d); return &v }

	// Epoch 1.
	s := open()
	unit(s, 25, ptrs[:25], nil)
	unit(s, 25, ptrs[25:], nil)

	var changed []*Airport
	for i := 0; i < 50; i += 7 { // ids 1, 8, 15, 22, 29, 36, 43, 50
		ptrs[i].Altitude++
		changed = append(changed, ptrs[i])
	}
	byID["1"].Checked = nil // nullable time cleared
	byID["2"].Notes, byID["2"].Checked = "runway lights checked", at(30*time.Minute)
	byID["3"].Notes = "00123"                           // text stays text
	byID["7"].Name = "Narsarsuaq Cafe\u0301"            // NFD: stored and hashed as NFC
	byID["12"].Name = "Egilssta\u00f0ir Airport"        // same as the data: unchanged
	byID["13"].Name = "Hornafjo\u0308r\u00f0ur Airport" // NFD retype of the data's NFC name: unchanged
	changed = append(changed, byID["2"], byID["3"], byID["7"], byID["12"], byID["13"])
	unit(s, 11, changed, nil) // 8 altitude + 2, 3, 7; 12 and 13 unchanged

	unit(s, 0, []*Airport{byID["10"], byID["11"], byID["12"], byID["13"], byID["14"]}, nil) // unchanged persists: no event
	must(t, s.Close())

	// Epoch 2: reopen (catch-up), removes, re-create, new airport, mixed unit.
	clock.Advance(genStep)
	s = open()
	unit(s, 3, nil, []*Airport{byID["5"], byID["6"], byID["40"]})
	re := *byID["5"]
	re.Name, re.Altitude, re.Checked, re.Notes = "Port Moresby Jacksons (re-created)", 146, at(2*time.Hour), "re-created"
	nfd := &Airport{ID: "9001", Name: "Zu\u0308rich Test Field", City: "Zu\u0308rich", Country: "Switzerland",
		IATA: "", Lat: 47.464722, Lng: 8.549167, Altitude: 1416, TZ: "Europe/Zurich", Active: true, Checked: at(-time.Hour)}
	unit(s, 2, []*Airport{&re, nfd}, nil)
	re.Altitude = 147
	unit(s, 2, []*Airport{&re, byID["42"]}, []*Airport{byID["41"]}) // 42 unchanged
	must(t, s.Close())
}

// v1Persisted is an entity.persisted event in the OLD schema-1 shape
// {entity, id, values{…}, revisions{…}}, written as recorded (this build
// only writes schema 2; events.Recorded carries the old schema, and reads
// upcast it: see events.upcastEntityPersistedV1).
func v1Persisted(entity, id string, values map[string]any, revs map[string]any) events.Event {
	return events.Event{Payload: events.Recorded{Type: events.TypeEntityPersisted, Schema: 1, Fields: map[string]any{
		"entity": entity, "id": id, "values": values, "revisions": revs}}}
}

// v2Persisted is an entity.persisted event in the current schema-2 shape
// (the typed catalogue payload; its canonical map is the one the committed
// log holds: revisions encode as int64).
func v2Persisted(entity, id string, created bool, fields map[string]any, revs map[string]any) events.Event {
	r := make(map[string]uint64, len(revs))
	for k, v := range revs {
		r[k] = uint64(v.(int64))
	}
	return events.Event{Payload: events.EntityPersisted{Entity: entity, ID: id, Created: created, Fields: fields, Revisions: r}}
}

func removed(entity, id string) events.Event {
	return events.Event{Payload: events.EntityRemoved{Entity: entity, ID: id}}
}

// auditNote is the one record of the schema_v1 log whose type no build
// ever defined ("audit.note"): written as recorded, at schema 1 (what the
// old build stamped on an event without a schema). Reading it fails with
// events.ErrUnknownEventType; see unknownSeq in helpers_test.go.
func auditNote(text string) events.Event {
	return events.Event{Payload: events.Recorded{Type: auditNoteType, Schema: 1, Fields: map[string]any{"text": text}}}
}

// ones returns a revisions map with every key of values at revision 1.
func ones(values map[string]any) map[string]any {
	out := map[string]any{}
	for k := range values {
		out[k] = int64(1)
	}
	return out
}

// airportValues is every non-key field of an Airport as canonical values,
// the shape a create carries.
func airportValues(name, city, country, iata string, lat, lng float64, alt int64, tz string, checked any, active bool) map[string]any {
	return map[string]any{"name": name, "city": city, "country": country, "iata": iata, "latitude": lat,
		"longitude": lng, "altitude": alt, "tz": tz, "notes": "", "checked": checked, "active": active}
}

// genSchemaV1 writes the "schema_v1" log with the events package directly,
// as an old build and then a new build would have:
//
//	epoch 1 (old build): schema-1 creates of Airport 1, 2, 3 and of a Runway
//	  (an entity the read model does not declare), a schema-1 update of
//	  Airport 1, a record of a type no build ever defined ("audit.note",
//	  written as events.Recorded; reads fail on it with
//	  events.ErrUnknownEventType); then the process dies without
//	  releasing its lease (lease.toml left behind);
//	epoch 2 (new build): takes the expired lease over, reconciling the
//	  leftover lease.toml; schema-2 update of Airport 2 and 1, a schema-2
//	  create of Airport 4, a remove and schema-2 re-create of Airport 3; a
//	  clean close (lease.released).
func genSchemaV1(t *testing.T, dir string) {
	clock := events.NewManualClock(time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC))
	open := func(op string) *events.Writer {
		w, err := events.OpenWriter(dir, events.WriterOptions{Log: events.Options{Clock: clock}, Operation: op,
			HeartbeatInterval: -1, AcquireWait: -1})
		must(t, err)
		return w
	}
	versions := map[string]uint64{}
	appendUnit := func(w *events.Writer, byStream ...any) {
		t.Helper()
		clock.Advance(genStep)
		must(t, w.RenewIfDue())
		var u events.Unit
		for i := 0; i < len(byStream); i += 2 {
			stream, evs := byStream[i].(string), byStream[i+1].([]events.Event)
			u.Streams = append(u.Streams, events.StreamAppend{Stream: stream, ExpectedVersion: versions[stream], Events: evs})
			versions[stream] += uint64(len(evs))
		}
		res, err := w.Append(u)
		must(t, err)
		must(t, res[0].Err)
	}
	ap := func(id string) string { return events.EntityStream("Airport", id) }
	checked := time.Date(2024, 3, 10, 7, 0, 0, 123000000, time.UTC)

	w := open("gen-schema-v1-old-build")
	a1 := airportValues("Goroka Airport", "Goroka", "Papua New Guinea", "GKA", -6.081689834590001, 145.391998291, 5282, "Pacific/Port_Moresby", checked, true)
	a2 := airportValues("Madang Airport", "Madang", "Papua New Guinea", "MAG", -5.20707988739, 145.789001465, 20, "Pacific/Port_Moresby", nil, false)
	appendUnit(w, ap("1"), []events.Event{v1Persisted("Airport", "1", a1, ones(a1))},
		ap("2"), []events.Event{v1Persisted("Airport", "2", a2, ones(a2))})
	rw := map[string]any{"length_m": int64(1600), "surface": "asphalt"}
	appendUnit(w, "entity/Runway/1-09", []events.Event{v1Persisted("Runway", "1-09", rw, ones(rw))})
	appendUnit(w, ap("1"), []events.Event{v1Persisted("Airport", "1",
		map[string]any{"altitude": int64(5283), "notes": "v1 note"},
		map[string]any{"altitude": int64(2), "notes": int64(2)})})
	a3 := airportValues("Cafe\u0301 Field", "Reykjavi\u0301k", "Iceland", "", 64.13, -21.94, 48, "Atlantic/Reykjavik", nil, true)
	appendUnit(w, ap("3"), []events.Event{v1Persisted("Airport", "3", a3, ones(a3))},
		auditStream, []events.Event{auditNote("unknown to the projector")})
	// The old build dies: log closed without releasing the lease; its
	// lease.toml stays behind for the next writer to reconcile.
	must(t, w.Log().Close())

	clock.Advance(events.DefaultLeaseTTL + genStep) // the dead writer's lease expires
	w = open("gen-schema-v1-new-build")
	appendUnit(w, ap("2"), []events.Event{v2Persisted("Airport", "2", false,
		map[string]any{"name": "Madang (schema 2)"}, map[string]any{"name": int64(2)})})
	a4 := airportValues("Nadzab Airport", "Nadzab", "Papua New Guinea", "LAE", -6.569803, 146.725977, 239, "Pacific/Port_Moresby", nil, true)
	appendUnit(w, ap("4"), []events.Event{v2Persisted("Airport", "4", true, a4, ones(a4))})
	appendUnit(w, ap("3"), []events.Event{removed("Airport", "3")})
	a3b := map[string]any{}
	for k, v := range a3 {
		a3b[k] = v
	}
	a3b["name"] = "Cafe\u0301 Field (re-created)"
	revs := ones(a3b)
	for k := range revs {
		revs[k] = int64(2) // a re-create continues every field's revision
	}
	appendUnit(w, ap("3"), []events.Event{v2Persisted("Airport", "3", true, a3b, revs)})
	appendUnit(w, ap("1"), []events.Event{v2Persisted("Airport", "1", false,
		map[string]any{"checked": nil, "active": false}, map[string]any{"checked": int64(2), "active": int64(2)})})
	must(t, w.Close())
}
