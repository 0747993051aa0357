package bench

import (
	"fmt"
	"log/slog"
	"math"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Freshness (row 12): how long a user waits, in the configuration
// `hikoutei serve` runs, for their commits to show in the sheet and for a
// person's edit to reach their store.
//
// Ten entities (P0–P9, each with a user-owned note) of
// HIKOUTEI_BENCH_FRESH_ROWS rows each are synced to an in-process
// emulator with Google's latency and quota model (not timed). Then, for
// HIKOUTEI_BENCH_FRESH_SECONDS, the application commits 50 single-row
// updates a second (round-robin over the entities, a row never updated
// twice while the rows last) and a person types a note into an Input tab
// every 2 s. The store runs its workers at the seeds' defaults (poll and
// full scan every 60 s, dispatcher pass every 1 s, reconciliation every
// 30 s) with the provider's default pacing.
//
//   - commit → visible: from Commit returning until the emulator's
//     System tab shows that update (or a newer one of the row), sampled
//     every 100 ms (so a figure is late by up to 100 ms);
//   - edit → read model: from the person's edit until Get returns the
//     typed note, sampled every 20 ms;
//   - the requests the emulator received (reads/min, writes/min), the
//     dispatches (lanes) the dispatcher sent a minute and every read,
//     the polls' too, over them (reads/dispatch: under 1 when a pass's
//     lanes share one read), and the 429s the provider was answered
//     (each one halves its budget for a while).
//
// BenchmarkFreshnessHook mounts Store.WakeHandler and has the emulator's
// edit trigger (the Apps Script of docs/wake-hook.md) call it;
// BenchmarkFreshnessPoll has no hook: the 60 s poll brings the edits.

const (
	freshEntities   = 10
	freshEdited     = 100 // rows 0–99 of each entity are the person's; the load updates the rest
	freshCommitRate = 50  // commits a second
	freshEditEvery  = 2 * time.Second
)

var freshSecret = []byte("the bench's wake secret, 32 bytes or more")

func BenchmarkFreshnessHook(b *testing.B) { benchFreshness(b, true, 1) }
func BenchmarkFreshnessPoll(b *testing.B) { benchFreshness(b, false, 1) }

// BenchmarkFreshnessHookPool2 is BenchmarkFreshnessHook with a pool of
// two service accounts (two emulator callers, each with Google's per-user
// quota): not a row of make bench, the figure of a pool.
func BenchmarkFreshnessHookPool2(b *testing.B) { benchFreshness(b, true, 2) }

// freshRun is one store under test and its emulator.
type freshRun struct {
	s    *hikoutei.Store
	prov *gsheets.Provider
	emu  *emulator.Emulator
	rows int
}

func benchFreshness(b *testing.B, hook bool, accounts int) {
	rows, secs := freshEnv(b, config.EnvBenchFreshRows, 1000), freshEnv(b, config.EnvBenchFreshSeconds, 60)
	if rows <= freshEdited {
		b.Fatalf("%s=%d: want more than %d rows", config.EnvBenchFreshRows, rows, freshEdited)
	}
	e := googleEmulator(b, "bench-fresh")
	defer e.closer()
	if e.local == nil {
		b.Fatal("the freshness benchmark needs an in-process emulator (a person edits it)")
	}
	s, prov := openFresh(b, e, accounts)
	r := &freshRun{s: s, prov: prov, emu: e.local, rows: rows}
	defer r.s.Close()
	if hook {
		r.mountHook(b)
	}
	start := time.Now()
	r.seed(b)
	b.Logf("setup: %d × %d rows synced in %v", freshEntities, rows, time.Since(start).Round(time.Millisecond))
	var m freshMeasure
	c0, d0, q0 := r.emu.Counters(e.sheet), r.dispatcher(b), r.prov.QuotaBudget()
	for b.Loop() {
		r.measure(b, &m, time.Duration(secs)*time.Second)
		m.windows++
	}
	c1, d1, q1 := r.emu.Counters(e.sheet), r.dispatcher(b), r.prov.QuotaBudget()
	m.reads, m.writes = c1.Reads-c0.Reads, c1.Writes-c0.Writes
	m.throttled = int64(q1.ReadThrottled-q0.ReadThrottled) + int64(q1.WriteThrottled-q0.WriteThrottled)
	m.passes, m.dispatches = d1["passes"]-d0["passes"], d1["dispatches"]-d0["dispatches"]
	m.report(b, time.Duration(secs)*time.Second)
}

// freshEnv reads a positive integer setting of the benchmark.
func freshEnv(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// openFresh opens a store syncing the ten entities with serve's
// defaults, through a pool of accounts service accounts (more than one:
// emulator callers), and returns it with its provider.
func openFresh(b *testing.B, e *emu, accounts int) (*hikoutei.Store, *gsheets.Provider) {
	b.Helper()
	log := slog.New(slog.DiscardHandler)
	cfg := gsheets.Config{Endpoint: e.url, Logger: log}
	if accounts > 1 {
		cfg.HTTPClient = emulator.Caller("bench-sa-0")
		for i := 1; i < accounts; i++ {
			cfg.Pool = append(cfg.Pool, gsheets.Account{HTTPClient: emulator.Caller("bench-sa-" + strconv.Itoa(i))})
		}
	}
	prov, err := gsheets.New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	noEnv := func(string) (string, bool) { return "", false } // the seeds' defaults, whatever the environment says
	s, err := hikoutei.Open(b.Context(), b.TempDir(), hikoutei.Options{Operation: "bench", Logger: log, NoAdmin: true,
		Sync: &hikoutei.SyncOptions{SpreadsheetID: e.sheet, Provider: prov, LookupEnv: noEnv}}, pollDefs()...)
	if err != nil {
		b.Fatal(err)
	}
	return s, prov
}

// mountHook serves the store's wake handler on loopback and has the
// emulator's edit trigger call it.
func (r *freshRun) mountHook(b *testing.B) {
	b.Helper()
	var mu sync.Mutex
	results := map[string]int{}
	b.Cleanup(func() { mu.Lock(); b.Logf("wakes: %v", results); mu.Unlock() })
	h, err := r.s.WakeHandler(hikoutei.WakeHookOptions{Secret: freshSecret, OnResult: func(res string) {
		mu.Lock()
		results[res]++
		mu.Unlock()
	}})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	r.emu.SetEditTrigger(&emulator.EditTrigger{URL: srv.URL, Secret: string(freshSecret)})
}

// seed commits every row of the ten entities and waits until they are in
// the sheet.
func (r *freshRun) seed(b *testing.B) {
	b.Helper()
	for k := range freshEntities {
		for i := 0; i < r.rows; i += 1000 {
			u := r.s.Begin()
			for j := i; j < min(i+1000, r.rows); j++ {
				if err := u.Persist(freshRecord(k, strconv.Itoa(j), "seed", "")); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := u.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := r.s.WaitSynced(ctx); err != nil {
		b.Fatal(err)
	}
}

// freshRecord is entity k's record.
func freshRecord(k int, id, name, note string) any {
	p := P0{id, name, note}
	return [freshEntities]any{&p, (*P1)(&p), (*P2)(&p), (*P3)(&p), (*P4)(&p), (*P5)(&p), (*P6)(&p), (*P7)(&p), (*P8)(&p), (*P9)(&p)}[k]
}

// freshNote reads entity k's row id's note from the read model.
func freshNote(s *hikoutei.Store, k int, id string) (string, error) { return freshNotes[k](s, id) }

// freshNotes reads each entity's notes (made once, not per read).
var freshNotes = [freshEntities]func(*hikoutei.Store, string) (string, error){
	noteOf[P0], noteOf[P1], noteOf[P2], noteOf[P3], noteOf[P4], noteOf[P5], noteOf[P6], noteOf[P7], noteOf[P8], noteOf[P9],
}

// noteOf reads row id's note of entity T (P0 to P9, all shaped as P0).
func noteOf[T P0 | P1 | P2 | P3 | P4 | P5 | P6 | P7 | P8 | P9](s *hikoutei.Store, id string) (string, error) {
	p, err := hikoutei.Get[T](ctx, s, id)
	if err != nil {
		return "", err
	}
	return P0(*p).Note, nil
}

// freshMeasure gathers the latencies of every measured window.
type freshMeasure struct {
	visible, edits []float64 // seconds
	commitLatency  []float64 // seconds from Begin until Commit returned
	commits        int
	windows        int
	reads, writes  int64 // requests the emulator received while measured
	// passes and dispatches (lanes sent) of the dispatcher while measured
	passes, dispatches int64
	throttled          int64 // 429s the provider was answered while measured
}

// dispatcher is the store's dispatcher counters (Stats.Dispatcher).
func (r *freshRun) dispatcher(b *testing.B) map[string]int64 {
	st, err := r.s.Stats(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return st.Dispatcher
}

// pendingCommit is an update committed and not yet seen in the sheet.
type pendingCommit struct {
	k  int
	id string
	n  int // the update's number: the row shows "v<n>" or a newer one
	at time.Time
}

// pendingEdit is a person's edit not yet in the read model.
type pendingEdit struct {
	k        int
	id, note string
	at       time.Time
}

// measure runs one window of load and edits, then waits until every
// update is visible and every edit is in the read model.
func (r *freshRun) measure(b *testing.B, m *freshMeasure, window time.Duration) {
	b.Helper()
	var mu sync.Mutex
	var commits []pendingCommit
	var edits []pendingEdit
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { r.commitLoad(b, stop, &mu, &commits, m) })
	wg.Go(func() { r.personEdits(b, stop, &mu, &edits) })
	done := time.After(window)
	const grace = 3 * time.Minute // the 60 s poll and a reconciliation bring anything a wake missed
	deadline := time.Now().Add(window + grace)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	lastSheet := time.Time{}
	for {
		select {
		case <-done:
			close(stop)
			wg.Wait()
			done = nil
		case <-tick.C:
		}
		mu.Lock()
		edits = r.settleEdits(b, edits, m)
		if time.Since(lastSheet) >= 100*time.Millisecond {
			commits = r.settleCommits(b, commits, m)
			lastSheet = time.Now()
		}
		nc, ne := len(commits), len(edits)
		mu.Unlock()
		if done == nil && nc+ne == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%v after the window: %d updates not in the sheet, %d edits not in the store", grace, nc, ne)
		}
	}
}

// commitLoad offers freshCommitRate single-row updates a second until
// stop, each of a row the person does not edit, open loop: a commit
// starts on its tick whether or not the previous one returned (at most
// 4,096 in flight), so a slow commit delays no later one's start.
func (r *freshRun) commitLoad(b *testing.B, stop <-chan struct{}, mu *sync.Mutex, out *[]pendingCommit, m *freshMeasure) {
	tick := time.NewTicker(time.Second / freshCommitRate)
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, 4096)
	for n := m.commits; ; n++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		select {
		case slots <- struct{}{}:
		default:
			b.Errorf("4,096 commits in flight: the store does not keep up with %d commits a second", freshCommitRate)
			return
		}
		m.commits = n + 1
		wg.Go(func() {
			defer func() { <-slots }()
			r.commitOne(b, n, mu, out, m)
		})
	}
}

// commitOne commits update n and records it as pending.
func (r *freshRun) commitOne(b *testing.B, n int, mu *sync.Mutex, out *[]pendingCommit, m *freshMeasure) {
	k, id := n%freshEntities, strconv.Itoa(freshEdited+(n/freshEntities)%(r.rows-freshEdited))
	start := time.Now()
	u := r.s.Begin()
	if err := u.Persist(freshRecord(k, id, "v"+strconv.Itoa(n), "")); err != nil {
		b.Error(err)
		return
	}
	if _, err := u.Commit(ctx); err != nil {
		b.Error(err)
		return
	}
	now := time.Now()
	mu.Lock()
	*out = append(*out, pendingCommit{k, id, n, now})
	m.commitLatency = append(m.commitLatency, now.Sub(start).Seconds())
	mu.Unlock()
}

// personEdits types a note into one of the person's rows every
// freshEditEvery until stop.
func (r *freshRun) personEdits(b *testing.B, stop <-chan struct{}, mu *sync.Mutex, out *[]pendingEdit) {
	tick := time.NewTicker(freshEditEvery)
	defer tick.Stop()
	p := r.emu.Person("bench-fresh")
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		k, id, note := n%freshEntities, strconv.Itoa((n/freshEntities)%freshEdited), fmt.Sprintf("edit %d at %d", n, time.Now().UnixNano())
		cell := ""
		err := p.LookAndType(layout.InputTabName(entityName(k)), func(shown [][]string) (string, string) {
			cell = cellOf(shown, id, "note")
			return cell, note
		})
		if err == nil && cell == "" {
			err = fmt.Errorf("the Input tab of %s shows no row %s with a note", entityName(k), id)
		}
		if err != nil {
			b.Error(err)
			return
		}
		mu.Lock()
		*out = append(*out, pendingEdit{k, id, note, time.Now()})
		mu.Unlock()
	}
}

func entityName(k int) string { return "P" + strconv.Itoa(k) }

// cellOf is the A1 cell of column col in the row whose "id" is id, or ""
// (an edit LookAndType refuses) when the tab shows no such row.
func cellOf(shown [][]string, id, col string) string {
	if len(shown) == 0 {
		return ""
	}
	ki, ci := slices.Index(shown[0], "id"), slices.Index(shown[0], col)
	for r, row := range shown {
		if r > 0 && ki >= 0 && ci >= 0 && ki < len(row) && row[ki] == id {
			return a1.CellLabel(r, ci)
		}
	}
	return ""
}

// settleEdits records the edits the read model shows and returns the rest.
func (r *freshRun) settleEdits(b *testing.B, edits []pendingEdit, m *freshMeasure) []pendingEdit {
	left := edits[:0]
	for _, e := range edits {
		note, err := freshNote(r.s, e.k, e.id)
		if err != nil {
			b.Fatal(err)
		}
		if note == e.note {
			m.edits = append(m.edits, time.Since(e.at).Seconds())
			continue
		}
		left = append(left, e)
	}
	return left
}

// settleCommits records the updates each System tab shows and returns
// the rest.
func (r *freshRun) settleCommits(b *testing.B, commits []pendingCommit, m *freshMeasure) []pendingCommit {
	if len(commits) == 0 {
		return commits
	}
	p := r.emu.Person("bench-fresh")
	var shown [freshEntities]map[string]int
	left := commits[:0]
	for _, c := range commits {
		if shown[c.k] == nil {
			grid, err := p.Displayed(layout.SystemTabName(entityName(c.k)))
			if err != nil {
				b.Fatal(err)
			}
			shown[c.k] = updatesShown(grid)
		}
		if shown[c.k][c.id] >= c.n {
			m.visible = append(m.visible, time.Since(c.at).Seconds())
			continue
		}
		left = append(left, c)
	}
	return left
}

// updatesShown maps each row's id to the number of the update its name
// shows (-1 for the seed's name).
func updatesShown(grid [][]string) map[string]int {
	out := map[string]int{}
	if len(grid) == 0 {
		return out
	}
	ki, ni := slices.Index(grid[0], "id"), slices.Index(grid[0], "name")
	for _, row := range grid[1:] {
		if ki < 0 || ni < 0 || ki >= len(row) || ni >= len(row) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(row[ni], "v"))
		if err != nil {
			n = -1
		}
		out[row[ki]] = n
	}
	return out
}

// report sends the percentiles of every window to the runner.
func (m *freshMeasure) report(b *testing.B, window time.Duration) {
	b.ReportMetric(percentile(m.visible, 50), "visible-p50-s")
	b.ReportMetric(percentile(m.visible, 99), "visible-p99-s")
	b.ReportMetric(percentile(m.edits, 50), "edit-p50-s")
	b.ReportMetric(percentile(m.edits, 99), "edit-p99-s")
	b.ReportMetric(float64(m.commits)/(window.Seconds()*float64(m.windows)), "commits/s")
	b.ReportMetric(float64(len(m.edits)), "edits")
	b.ReportMetric(percentile(m.commitLatency, 99), "commit-p99-s")
	mins := b.Elapsed().Minutes()
	b.ReportMetric(float64(m.reads)/mins, "reads/min")
	b.ReportMetric(float64(m.writes)/mins, "writes/min")
	b.ReportMetric(float64(m.dispatches)/mins, "dispatches/min")
	b.ReportMetric(float64(m.throttled), "429s")
	if m.dispatches > 0 { // every read, the polls' too, over the lanes the dispatcher sent
		b.ReportMetric(float64(m.reads)/float64(m.dispatches), "reads/dispatch")
	}
}

// percentile is the nearest-rank p-th percentile of xs (NaN when empty).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(p/100*float64(len(s))))-1)]
}
