package emulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// Replays the recorded Google traffic in testdata/cassettes (gspread, MIT)
// against a fresh AutoCreate emulator and compares what carries meaning:
// status class; on 2xx range, majorDimension, values, updated*, tableRange
// (including its absence), clearedRange(s), valueRanges, replies key sets,
// and each sheet's title, index, rowCount and columnCount.

type cassette struct {
	Source       string        `json:"source"`
	Interactions []interaction `json:"interactions"`
}

type interaction struct {
	Method   string  `json:"method"`
	URI      string  `json:"uri"`
	Body     *string `json:"body"`
	Status   int     `json:"status"`
	Response string  `json:"response"`
}

func TestCassettesReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/cassettes/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cassettes: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			replayCassette(t, f)
		})
	}
}

// replayer holds the per-cassette state: recorded→emulator id mapping and
// tabs whose content was changed outside the Sheets API (Drive calls were
// dropped from the recordings).
type replayer struct {
	t       *testing.T
	emu     *Emulator
	url     string
	ids     map[string]string // recorded id (decimal) → emulator id
	foreign map[string]bool   // spreadsheetId + "\x00" + tab title
	written map[string]bool   // spreadsheets some recorded call wrote to
}

func replayCassette(t *testing.T, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var c cassette
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	emu := New(Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	rp := &replayer{t: t, emu: emu, url: srv.URL, ids: map[string]string{"0": "0"}, foreign: map[string]bool{}, written: map[string]bool{}}
	for i, in := range c.Interactions {
		rp.step(i, in)
	}
}

func (rp *replayer) step(i int, in interaction) {
	t := rp.t
	rp.seedForeign(in)
	status, got := rp.send(in)
	if status/100 != in.Status/100 {
		t.Fatalf("#%d %s %s: status %d, recorded %d\nresponse: %s", i, in.Method, in.URI, status, in.Status, got)
	}
	if in.Status/100 != 2 {
		return
	}
	want, act := decodeJSON(t, in.Response), decodeJSON(t, string(got))
	if rp.adoptOutOfBand(in, want, act) {
		if status, got = rp.send(in); status/100 != 2 {
			t.Fatalf("#%d %s %s: status %d on a retry after adopting, recorded %d", i, in.Method, in.URI, status, in.Status)
		}
		act = decodeJSON(t, string(got))
	}
	rp.learnIDs(want, act)
	if diff := compareResponse("", want, act); diff != "" {
		t.Fatalf("#%d %s %s: %s\nrecorded: %s\nemulator: %s", i, in.Method, in.URI, diff, compactJSON(in.Response), got)
	}
}

func (rp *replayer) send(in interaction) (int, []byte) {
	var body io.Reader
	if in.Body != nil {
		body = strings.NewReader(rp.mapIDs(*in.Body))
	}
	req, err := http.NewRequest(in.Method, rp.url+rp.mapURI(in.URI), body)
	if err != nil {
		rp.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		rp.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}

// idKey matches an id field in a request body: numeric (sheetId,
// protectedRangeId, metadataId, …) or string (namedRangeId, …).
var idKey = regexp.MustCompile(`"(\w*Id)":\s*("?)([\w-]+)"?`)

// mapIDs rewrites recorded ids in a request body to the emulator's.
func (rp *replayer) mapIDs(body string) string {
	return idKey.ReplaceAllStringFunc(body, func(m string) string {
		sub := idKey.FindStringSubmatch(m)
		if strings.HasSuffix(strings.ToLower(sub[1]), "spreadsheetid") {
			return m
		}
		if to, ok := rp.ids[sub[3]]; ok {
			return `"` + sub[1] + `": ` + sub[2] + to + sub[2]
		}
		return m
	})
}

var metaPath = regexp.MustCompile(`/developerMetadata/(\d+)`)

func (rp *replayer) mapURI(uri string) string {
	return metaPath.ReplaceAllStringFunc(uri, func(m string) string {
		id := strings.TrimPrefix(m, "/developerMetadata/")
		if to, ok := rp.ids[id]; ok {
			return "/developerMetadata/" + to
		}
		return m
	})
}

// learnIDs walks recorded and emulator responses in parallel and maps ids.
func (rp *replayer) learnIDs(want, act any) {
	switch w := want.(type) {
	case map[string]any:
		a, _ := act.(map[string]any)
		for k, v := range w {
			if strings.HasSuffix(k, "Id") && !strings.HasSuffix(strings.ToLower(k), "spreadsheetid") {
				rp.mapID(v, a[k])
			}
			rp.learnIDs(v, a[k])
		}
	case []any:
		a, _ := act.([]any)
		for i, v := range w {
			if i < len(a) {
				rp.learnIDs(v, a[i])
			}
		}
	}
}

// adoptOutOfBand detects a spreadsheets.get showing a tab the Sheets API
// calls cannot have produced: a recorded sheetId never seen in any reply,
// under a title the emulator lacks. The recording dropped a Drive call
// (CSV import, copy). The harness then reshapes the emulator's tabs like a
// person would (rename, add, resize) and marks them foreign, so that their
// first values read is seeded from the recording. Returns true when it
// changed anything; the caller re-sends the request and compares again.
func (rp *replayer) adoptOutOfBand(in interaction, want, act map[string]any) bool {
	wSheets, _ := want["sheets"].([]any)
	aSheets, _ := act["sheets"].([]any)
	id, _ := want["spreadsheetId"].(string)
	if in.Method != http.MethodGet || id == "" || !rp.hasForeignSheet(wSheets, aSheets) {
		return false
	}
	p := rp.emu.Person(id)
	for i, ws := range wSheets {
		wp := sheetProps(ws)
		title := wp["title"].(string)
		var emuID string
		if j := findTitle(aSheets, title); j >= 0 {
			emuID = sheetProps(aSheets[j])["sheetId"].(json.Number).String()
		} else if i < len(aSheets) && findTitle(wSheets, sheetProps(aSheets[i])["title"].(string)) < 0 {
			old := sheetProps(aSheets[i])
			rp.must(p.RenameTab(old["title"].(string), title))
			emuID = old["sheetId"].(json.Number).String()
		} else {
			newID, err := p.AddTab(title, 1000, 26)
			rp.must(err)
			emuID = itoa(int(newID))
		}
		grid, _ := wp["gridProperties"].(map[string]any)
		rows, _ := grid["rowCount"].(json.Number).Int64()
		cols, _ := grid["columnCount"].(json.Number).Int64()
		rp.must(p.ResizeTab(title, int(rows), int(cols)))
		rp.ids[wp["sheetId"].(json.Number).String()] = emuID
		rp.foreign[id+"\x00"+title] = true
	}
	rp.t.Logf("adopted out-of-band change (dropped Drive call) of %d tab(s)", len(wSheets))
	return true
}

func (rp *replayer) hasForeignSheet(wSheets, aSheets []any) bool {
	for _, ws := range wSheets {
		wp := sheetProps(ws)
		wid, _ := wp["sheetId"].(json.Number)
		title, _ := wp["title"].(string)
		if _, known := rp.ids[wid.String()]; !known && title != "" && findTitle(aSheets, title) < 0 {
			return true
		}
	}
	return false
}

func findTitle(sheets []any, title string) int {
	for i, s := range sheets {
		if sheetProps(s)["title"] == title {
			return i
		}
	}
	return -1
}

func (rp *replayer) must(err error) {
	if err != nil {
		rp.t.Fatalf("adopting an out-of-band change: %v", err)
	}
}

func sheetProps(v any) map[string]any {
	m, _ := v.(map[string]any)
	p, _ := m["properties"].(map[string]any)
	return p
}

var bookURI = regexp.MustCompile(`^/v4/spreadsheets/([^/?:]+)`)

// seedForeign seeds content that can only have come from outside the
// Sheets API, from the recorded read that first shows it: tabs marked
// foreign by adoptOutOfBand, and any spreadsheet no recorded call has
// written to yet (a correct emulator must read it as empty, so recorded
// data there proves a dropped Drive call, e.g. a copy). Seeding types the
// recorded values like a person would.
func (rp *replayer) seedForeign(in interaction) {
	m := bookURI.FindStringSubmatch(in.URI)
	if m == nil {
		return
	}
	id := m[1]
	if in.Method == http.MethodPut || (in.Method == http.MethodPost && !strings.Contains(in.URI, ":search")) {
		rp.written[id] = true
		return
	}
	if in.Method != http.MethodGet || in.Status != 200 || !strings.Contains(in.URI, "/values") {
		return
	}
	rec := decodeJSON(rp.t, in.Response)
	vrs := []any{rec}
	if list, ok := rec["valueRanges"].([]any); ok {
		vrs = list
	}
	for _, v := range vrs {
		vr, _ := v.(map[string]any)
		echo, _ := vr["range"].(string)
		r, err := a1.Parse(echo)
		key := id + "\x00" + r.Sheet
		if err != nil || vr["values"] == nil || (rp.written[id] && !rp.foreign[key]) {
			continue
		}
		rp.seedValues(id, r.Sheet, echo, vr)
		delete(rp.foreign, key)
	}
}

// compareResponse returns "" when act matches want on the compared fields.
func compareResponse(path string, want, act map[string]any) string {
	for _, k := range []string{"range", "majorDimension", "values", "updatedRange", "updatedRows", "updatedColumns",
		"updatedCells", "tableRange", "clearedRange", "clearedRanges", "totalUpdatedRows", "totalUpdatedColumns",
		"totalUpdatedCells", "totalUpdatedSheets"} {
		wv, wok := want[k]
		av, aok := act[k]
		if wok != aok {
			return path + k + ": present in recording=" + boolStr(wok) + ", in emulator=" + boolStr(aok)
		}
		if wok && !jsonEqual(wv, av) {
			return path + k + " differs"
		}
	}
	for _, k := range []string{"valueRanges", "responses"} {
		if d := compareList(path+k, want[k], act[k], compareResponse); d != "" {
			return d
		}
	}
	for _, k := range []string{"updates", "updatedData"} {
		if w, ok := want[k].(map[string]any); ok {
			a, _ := act[k].(map[string]any)
			if d := compareResponse(path+k+".", w, a); d != "" {
				return d
			}
		}
	}
	if d := compareList(path+"replies", want["replies"], act["replies"], compareKeys); d != "" {
		return d
	}
	return compareList(path+"sheets", want["sheets"], act["sheets"], compareSheet)
}

func compareList(path string, want, act any, cmp func(string, map[string]any, map[string]any) string) string {
	w, wok := want.([]any)
	a, _ := act.([]any)
	if !wok {
		return ""
	}
	if len(w) != len(a) {
		return path + ": length differs"
	}
	for i := range w {
		wm, _ := w[i].(map[string]any)
		am, _ := a[i].(map[string]any)
		if d := cmp(path+"["+itoa(i)+"].", wm, am); d != "" {
			return d
		}
	}
	return ""
}

func compareKeys(path string, want, act map[string]any) string {
	if !reflect.DeepEqual(sortedKeys(want), sortedKeys(act)) {
		return path + " key set differs"
	}
	return ""
}

func compareSheet(path string, want, act map[string]any) string {
	wp, ap := sheetProps(want), sheetProps(act)
	for _, k := range []string{"title", "index"} {
		if v, ok := wp[k]; ok && !jsonEqual(v, ap[k]) {
			return path + "properties." + k + " differs"
		}
	}
	wg, _ := wp["gridProperties"].(map[string]any)
	ag, _ := ap["gridProperties"].(map[string]any)
	for _, k := range []string{"rowCount", "columnCount"} {
		if v, ok := wg[k]; ok && !jsonEqual(v, ag[k]) {
			return path + "gridProperties." + k + " differs"
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := []string{}
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonEqual compares decoded JSON with numbers compared numerically.
func jsonEqual(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		x, _ := an.Float64()
		y, _ := bn.Float64()
		return x == y
	}
	switch av := a.(type) {
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !jsonEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k := range av {
			if !jsonEqual(av[k], bv[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func decodeJSON(t *testing.T, s string) map[string]any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("bad JSON %q: %v", s, err)
	}
	return m
}

func compactJSON(s string) string {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) != nil {
		return s
	}
	return buf.String()
}

func boolStr(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// seedValues types a recorded ValueRange into the emulator (text forced
// with a leading apostrophe, numbers and booleans typed as such).
func (rp *replayer) seedValues(id, title, rng string, rec map[string]any) {
	start, err := a1.Parse(rng)
	if err != nil {
		rp.t.Fatalf("seed foreign tab: %v", err)
	}
	rows, _ := rec["values"].([]any)
	for r, row := range rows {
		for c, v := range row.([]any) {
			text := fmt.Sprint(v)
			if s, ok := v.(string); ok {
				text = "'" + s
			}
			cell := a1.CellLabel(start.StartRow+r, start.StartCol+c)
			if rec["majorDimension"] == "COLUMNS" {
				cell = a1.CellLabel(start.StartRow+c, start.StartCol+r)
			}
			rp.must(rp.emu.Person(id).Type(title, cell, text))
		}
	}
}

// mapID records recorded→emulator for a numeric or string id pair.
func (rp *replayer) mapID(want, act any) {
	switch w := want.(type) {
	case json.Number:
		if a, ok := act.(json.Number); ok {
			rp.ids[w.String()] = a.String()
		}
	case string:
		if a, ok := act.(string); ok {
			rp.ids[w] = a
		}
	}
}
