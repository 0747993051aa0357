package wakehook

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The hint of wakes one poll carries: every tab as soon as one wake names
// every tab (an old script's), else the union of the sheets named.
func TestMergeHints(t *testing.T) {
	cases := []struct {
		name string
		a, b Hint
		want Hint
	}{
		{"nothing pending, one sheet", Hint{}, Hint{Sheets: []int64{7}}, Hint{Sheets: []int64{7}}},
		{"two sheets, sorted", Hint{Sheets: []int64{9}}, Hint{Sheets: []int64{7}}, Hint{Sheets: []int64{7, 9}}},
		{"the same sheet twice", Hint{Sheets: []int64{7}}, Hint{Sheets: []int64{7}}, Hint{Sheets: []int64{7}}},
		{"an old wake names every tab", Hint{Sheets: []int64{7}}, AllTabs, AllTabs},
		{"every tab stays every tab", AllTabs, Hint{Sheets: []int64{7}}, AllTabs},
		{"nothing and nothing", Hint{}, Hint{}, Hint{}},
		{"at most MaxSheets sheets", Hint{Sheets: seq(0, MaxSheets-1)}, Hint{Sheets: []int64{3}}, Hint{Sheets: seq(0, MaxSheets-1)}},
		{"more names every tab", Hint{Sheets: seq(0, MaxSheets-1)}, Hint{Sheets: []int64{MaxSheets}}, AllTabs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Merge(c.a, c.b)
			if got.All != c.want.All || !slices.Equal(got.Sheets, c.want.Sheets) {
				t.Fatalf("Merge(%+v, %+v) = %+v, want %+v", c.a, c.b, got, c.want)
			}
		})
	}
}

// seq is the sheetIds from to to, in order.
func seq(from, to int64) []int64 {
	var s []int64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// A wake's body names one sheet, or nothing (every tab); anything else is
// malformed.
func TestParseBody(t *testing.T) {
	cases := []struct {
		body string
		want Hint
		bad  bool
	}{
		{"", AllTabs, false},
		{`{"sheet":0}`, Hint{Sheets: []int64{0}}, false},
		{`{"sheet": 1234567890, "later": "ignored"}`, Hint{Sheets: []int64{1234567890}}, false},
		{`{"sheet":-1}`, Hint{}, true},
		{`{"sheet":"7"}`, Hint{}, true},
		{`{"sheet":1.5}`, Hint{}, true},
		{`{}`, Hint{}, true},
		{`sheet=7`, Hint{}, true},
		{`{"sheet":7,"pad":"` + strings.Repeat("x", maxBody) + `"}`, Hint{}, true},
	}
	for _, c := range cases {
		got, err := ParseBody([]byte(c.body))
		if c.bad != (err != nil) || err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseBody(%.40q): %v, want malformed %v", c.body, err, c.bad)
			continue
		}
		if got.All != c.want.All || !slices.Equal(got.Sheets, c.want.Sheets) {
			t.Errorf("ParseBody(%.40q) = %+v, want %+v", c.body, got, c.want)
		}
	}
}

// A wake naming a sheet wakes the pollers for it; an old script's wake
// (no body, v1 signature) still wakes them for every tab; a body added to
// a wake signed without it, or changed after signing, fails the signature
// and polls nothing, and a replayed named wake is refused. The wakes one
// trailing poll carries are merged.
func TestWakeNamingASheet(t *testing.T) {
	r := newRig(t)
	body := func(id int) string { return fmt.Sprintf(`{"sheet":%d}`, id) }
	named := func(id int) (string, string) {
		b := body(id)
		return SignBody(testSecret, r.clock.Now().Unix(), r.nonce(), []byte(b)), b
	}
	hdr, b := named(7)
	if code, res := r.sendBody(hdr, b); code != http.StatusAccepted || res != `{"result":"polled"}` {
		t.Fatalf("a named wake: %d %s", code, res)
	}
	if h := <-r.hints; h.All || !slices.Equal(h.Sheets, []int64{7}) {
		t.Fatalf("the named wake polled for %+v", h)
	}
	if code, res := r.sendBody(hdr, b); code != 401 || res != `{"error":"wake_replayed"}` {
		t.Fatalf("a replayed named wake: %d %s", code, res)
	}
	if code, res := r.sendBody(r.signedNow(), body(8)); code != 401 || res != `{"error":"wake_signature_invalid"}` {
		t.Fatalf("a body added to a wake signed without one: %d %s", code, res)
	}
	hdr, _ = named(8)
	if code, res := r.sendBody(hdr, body(9)); code != 401 || res != `{"error":"wake_signature_invalid"}` {
		t.Fatalf("a body changed after signing: %d %s", code, res)
	}
	if code, res := r.sendBody(r.signedNow(), "not json"); code != 400 || res != `{"error":"wake_malformed"}` {
		t.Fatalf("a malformed body: %d %s", code, res)
	}
	for _, id := range []int{3, 2, 3} { // scheduled, then coalesced twice
		hdr, b := named(id)
		r.sendBody(hdr, b)
	}
	r.clock.Advance(2 * time.Second)
	if h := <-r.hints; h.All || !slices.Equal(h.Sheets, []int64{2, 3}) {
		t.Fatalf("the trailing poll of sheets 3, 2, 3 polled for %+v", h)
	}
	hdr, b = named(4)
	r.sendBody(hdr, b)    // scheduled
	r.send(r.signedNow()) // an old script's wake, coalesced
	r.clock.Advance(2 * time.Second)
	if h := <-r.hints; !h.All {
		t.Fatalf("a trailing poll carrying an old wake polled for %+v, want every tab", h)
	}
	if got := r.polls.Load(); got != 3 {
		t.Fatalf("%d polls, want 3", got)
	}
}
