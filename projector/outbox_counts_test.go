package projector_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// transitionHistory moves effects through every kind of transition, item
// by item on their own streams and by batch events on the dispatch
// stream: queue, coalesce, claim, delivery_uncertain, a scheduled probe,
// failure (retryable and terminal), supersede, conflict, blocked
// candidate, applied; then settleHistory's batch claims and applied
// batches (set-wise where their rows are disjoint).
func transitionHistory(h *history) [][]events.Event {
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	queued := func(id, anchor string, seq uint64) events.Event {
		b := "T/" + anchor
		return h.next(events.OutboxStream(b), events.EffectQueued{EffectID: id, Spreadsheet: "s", Tab: "T", Anchor: anchor,
			Binding: b, StreamSequence: seq, Op: events.OpUpdate, Values: map[string]any{"name": id}, PayloadHash: "p" + id,
			Entity: "Airport", ID: anchor})
	}
	on := func(id string, p events.Payload) events.Event { return h.next(events.EffectStream(id), p) }
	claim := func(id string) events.Event {
		return on(id, events.EffectClaimed{EffectID: id, ClaimToken: "c" + id, Attempt: 1, Epoch: 1})
	}
	out := [][]events.Event{
		{queued("e1", "1", 1), queued("e2", "2", 1), queued("e3", "3", 1), queued("e4", "4", 1), queued("e5", "5", 1),
			queued("e6", "6", 1), queued("e7", "6", 2)},
		{on("e7", events.EffectCoalesced{EffectID: "e7", Op: events.OpUpdate, Values: map[string]any{"name": "x"}, PayloadHash: "q"})},
		{claim("e1"), claim("e2"), claim("e3")},
		{on("e1", events.EffectUncertain{EffectID: "e1", ClaimToken: "ce1", Code: "timeout", ProbeAt: t0})},
		{on("e1", events.EffectProbeScheduled{EffectID: "e1", ClaimToken: "ce1", Probes: 1, ProbeAt: t0.Add(time.Minute)})},
		{on("e2", events.EffectFailed{EffectID: "e2", ClaimToken: "ce2", Code: "x", RetryAt: t0}),
			on("e3", events.EffectFailed{EffectID: "e3", ClaimToken: "ce3", Code: "y", Terminal: true})},
		{on("e3", events.EffectSuperseded{EffectID: "e3", By: ""}), on("e2", events.EffectSuperseded{EffectID: "e2", By: "e9"})},
		{claim("e4"), on("e4", events.EffectConflict{EffectID: "e4", ClaimToken: "ce4", Code: "guard", ObservedHash: "o"})},
		{claim("e5"), on("e5", events.EffectBlocked{EffectID: "e5", ClaimToken: "ce5", Code: "candidate_row_changed"})},
		{on("e1", events.EffectApplied{EffectID: "e1", ClaimToken: "ce1", WrittenHash: "w1", Via: "probe"})},
		{claim("e6"), on("e6", events.EffectApplied{EffectID: "e6", ClaimToken: "ce6", WrittenHash: "w6", Via: "dispatch"})},
	}
	return append(out, settleHistory(h)...)
}

// countByState is the count of every outbox row by state, as a sorted
// list of "state|n" (what OutboxCounts returned before schema 8).
func countByState(t *testing.T, path string) []string {
	return query(t, path, projector.OutboxCountQuery+" ORDER BY state")
}

// listCounts renders OutboxCounts' non-zero states as countByState does.
func listCounts(c map[aggregates.EffectState]int64) []string {
	var out []string
	for s, n := range c {
		if n != 0 {
			out = append(out, fmt.Sprintf("%s|%d", s, n))
		}
	}
	sort.Strings(out)
	return out
}

// wantCountsAsCounted fails unless OutboxCounts of p equals the count of
// every outbox row by state, every state present (zero included).
func wantCountsAsCounted(t *testing.T, p *projector.Projector, what string) {
	t.Helper()
	c, err := p.OutboxCounts()
	must(t, err)
	for _, s := range aggregates.EffectStates {
		if _, ok := c[s]; !ok {
			t.Errorf("%s: state %s missing from the counts", what, s)
		}
	}
	wantRows(t, what, listCounts(c), countByState(t, p.Path())...)
}

// TestOutboxCountsEqualTheCountByStateAfterEveryTransition: the kept
// counts (hk_outbox_counts, schema 8) equal the count of every outbox row
// by state after every projection transaction of a history that moves
// effects through every transition, projected set-wise and item by item
// (every state is reached and most are left again, so a count that went
// wrong on any transition shows).
func TestOutboxCountsEqualTheCountByStateAfterEveryTransition(t *testing.T) {
	for _, itemWise := range []bool{false, true} {
		t.Run("itemWise="+strconv.FormatBool(itemWise), func(t *testing.T) {
			p, err := projector.Open(filepath.Join(t.TempDir(), projector.FileName), projector.Options{StoreID: storeID,
				Entities: testEntities(), InputTabs: []string{"Airport_Input"}})
			must(t, err)
			defer p.Close()
			if itemWise {
				p.ItemWise()
			}
			for i, b := range transitionHistory(newHistory()) {
				must(t, p.Apply(b))
				wantCountsAsCounted(t, p, fmt.Sprintf("after transaction %d", i))
			}
			wantRows(t, "states reached", countByState(t, p.Path()), "applied|9", "blocked_candidate|1", "conflict|1",
				"pending|1", "superseded|2")
		})
	}
}

// TestMigration8SeedsTheCountsOfAnOldReadModel: a read model at schema
// version 7 (no hk_outbox_counts, no triggers), holding effects in many
// states, is migrated in place: the counts are seeded from its rows and
// kept from then on, OutboxCounts returns what the count by state
// returned before the migration, and every table's digest but hk_meta's
// (its schema version) is unchanged (digests leave the counts out). ReadOutboxCounts on the read model
// before its migration (status opens it read-only) counts its rows.
func TestMigration8SeedsTheCountsOfAnOldReadModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	batches := transitionHistory(newHistory())
	for _, b := range batches[:9] {
		must(t, p.Apply(b))
	}
	must(t, p.Close())
	downgradeTo7(t, path)
	before := countByState(t, path)
	tables, err := projector.TableDigests(path)
	must(t, err)
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	must(t, err)
	old, err := projector.ReadOutboxCounts(conn)
	must(t, err)
	must(t, conn.Close())
	wantRows(t, "counts read from a schema 7 read model", listCounts(old), before...)

	p = openAt(t, path)
	defer p.Close()
	wantRows(t, "schema version", query(t, path, `SELECT value FROM hk_meta WHERE key = 'schema_version'`), strconv.Itoa(projector.SchemaVersion))
	wantCountsAsCounted(t, p, "after the migration")
	if c, _ := p.OutboxCounts(); !strings.Contains(strings.Join(listCounts(c), ","), "superseded|2") {
		t.Fatalf("counts after the migration %v: want the superseded effects of the old read model", c)
	}
	after, err := projector.TableDigests(path)
	must(t, err)
	delete(tables, "hk_meta") // its schema_version moved to 8
	delete(after, "hk_meta")
	if fmt.Sprint(after) != fmt.Sprint(tables) {
		t.Errorf("tables after the migration %v, want %v", after, tables)
	}
	for i, b := range batches[9:] {
		must(t, p.Apply(b))
		wantCountsAsCounted(t, p, fmt.Sprintf("after transaction %d past the migration", i))
	}
}

// TestOutboxCountsReadOnlyTheCounts: OutboxCounts reads hk_outbox_counts
// and never the outbox (whose rows grow with the store's history).
func TestOutboxCountsReadOnlyTheCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+projector.OutboxCountsQuery), "\n")
	if !strings.Contains(plan, "hk_outbox_counts") || strings.Contains(plan, "hk_outbox ") || strings.Contains(plan, "hk_outbox_state") {
		t.Errorf("%s\nplan:\n%s\nwant a read of hk_outbox_counts only", projector.OutboxCountsQuery, plan)
	}
}

// downgradeTo7 turns the read model at path into what a schema 7 build
// left: without the outbox counts (migration 8).
func downgradeTo7(t *testing.T, path string) {
	t.Helper()
	for _, q := range []string{`DROP TABLE hk_outbox_counts`, `UPDATE hk_meta SET value = '7' WHERE key = 'schema_version'`} {
		execSQL(t, path, q)
	}
}

// BenchmarkOutboxCounts reads the outbox's counts by state over a read
// model of 100,000 applied effects (never pruned) and 256 pending ones:
// "kept" as OutboxCounts reads them (hk_outbox_counts, schema 8),
// "counted" as it read them before (a count of every row by state, a
// scan of hk_outbox_state). One op is one read.
func BenchmarkOutboxCounts(b *testing.B) {
	p := openFresh(b)
	h := newHistory()
	for done := 0; done < 100_000+benchBatch; done += benchBatch {
		queued, attempts, written := lifecycleBatch(h, done, benchBatch)
		must(b, p.Apply(queued))
		if done < 100_000 {
			must(b, p.Apply([]events.Event{h.next(events.DispatchStream("s"), events.EffectsClaimed{ClaimToken: "c", Epoch: 1, Attempts: attempts})}))
			must(b, p.Apply([]events.Event{h.next(events.DispatchStream("s"), events.EffectsApplied{ClaimToken: "c", Via: "dispatch", Written: written})}))
		}
	}
	conn := p.Conn()
	for _, q := range []struct{ name, sql string }{{"kept", projector.OutboxCountsQuery}, {"counted", projector.OutboxCountQuery}} {
		b.Run(q.name, func(b *testing.B) {
			for range b.N {
				st := conn.Prep(q.sql)
				for {
					row, err := st.Step()
					must(b, err)
					if !row {
						break
					}
				}
				must(b, st.Reset())
			}
		})
	}
}

// lifecycleBatch makes n effect.queued events from the done-th on, with
// their claim's attempts and their applied hashes (BenchmarkEffectLifecycle
// and BenchmarkOutboxCounts).
func lifecycleBatch(h *history, done, n int) ([]events.Event, map[string]int64, map[string]string) {
	values := map[string]any{"name": "Goroka", "city": "Goroka", "altitude": int64(5282)}
	queued := make([]events.Event, 0, n)
	attempts, written := map[string]int64{}, map[string]string{}
	for i := done; i < done+n; i++ {
		id, anchor := "fx"+strconv.Itoa(i), "a"+strconv.Itoa(i)
		queued = append(queued, h.next(events.OutboxStream("Airport_System/"+anchor), events.EffectQueued{EffectID: id,
			Spreadsheet: "s", Tab: "Airport_System", Anchor: anchor, Binding: "Airport_System/" + anchor, StreamSequence: 1,
			Op: events.OpAppend, Values: values, PayloadHash: "h", Entity: "Airport", ID: anchor}))
		attempts[id], written[id] = 1, "w"+anchor
	}
	return queued, attempts, written
}

// TestEveryOutboxStateWriteIsCounted: the kept counts are right only if
// every statement that inserts, deletes or moves the state of an outbox
// row records its moves (moveCount). This lists those statements in the
// projector's sources; a new one fails here until it is counted and
// added to the list (and to transitionHistory).
func TestEveryOutboxStateWriteIsCounted(t *testing.T) {
	// A SET clause names its columns in lower case: a W starts its WHERE.
	write := regexp.MustCompile("(?s)(UPDATE (OR [A-Z]+ )?hk_outbox SET [^`\"W]*?\\bstate = |INSERT (OR [A-Z]+ )?INTO hk_outbox \\(|DELETE FROM hk_outbox\\b|REPLACE INTO hk_outbox\\b)")
	want := map[string]int{"outbox.go": 3, "outbox_batch.go": 2} // effectQueued, effectSet ×2; claimedSet, AppliedBatchUpdate
	got := map[string]int{}
	files, err := filepath.Glob("*.go")
	must(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		must(t, err)
		if n := len(write.FindAll(src, -1)); n > 0 {
			got[f] = n
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statements that write an outbox row's state, by file: %v, want %v (count a new one's moves with moveCount)", got, want)
	}
}
