package projector_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// TestMigration5AddsThePollIndexesToAnOldReadModel: a read model written
// at schema version 4 (without the poll's indexes) is migrated in place
// on open: it gets the covering index of hk_visible_state by tab and the
// partial index of active candidates, keeps its rows and checkpoint, and
// the poll's per-tab queries search those indexes instead of scanning.
func TestMigration5AddsThePollIndexesToAnOldReadModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	h := newHistory()
	must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1)}))
	must(t, p.Close())
	execSQL(t, path, `DROP INDEX hk_visible_state_tab`)
	execSQL(t, path, `DROP INDEX hk_sheet_field_candidates`)
	execSQL(t, path, `DROP TABLE hk_subscriptions`) // added by migration 6
	downgradeTo7(t, path)
	execSQL(t, path, `DROP TABLE hk_migrated_rows`) // added by migration 7
	execSQL(t, path, `DROP INDEX hk_outbox_dropped`)
	execSQL(t, path, `DROP INDEX hk_conflicts_open`)
	execSQL(t, path, `UPDATE hk_meta SET value = '4' WHERE key = 'schema_version'`)
	const indexes = `SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('hk_visible_state_tab', 'hk_sheet_field_candidates') ORDER BY name`
	wantRows(t, "indexes of the old read model", query(t, path, indexes))

	p = openAt(t, path)
	defer p.Close()
	if p.Checkpoint() != 1 {
		t.Fatalf("checkpoint after the migration: %d, want 1", p.Checkpoint())
	}
	wantRows(t, "indexes after the migration", query(t, path, indexes), "hk_sheet_field_candidates", "hk_visible_state_tab")
	wantRows(t, "schema version", query(t, path, `SELECT value FROM hk_meta WHERE key = 'schema_version'`), strconv.Itoa(projector.SchemaVersion))
	wantRows(t, "entity rows kept", query(t, path, `SELECT id FROM Airport`), "A")
	for q, index := range map[string]string{
		"SELECT anchor, hash, seq FROM hk_visible_state WHERE tab = 'T' AND hash != ''":                "hk_visible_state_tab",
		"SELECT candidate_row_hash FROM hk_sheet_field_state WHERE tab = 'T' AND candidate_hash != ''": "hk_sheet_field_candidates",
	} {
		plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+q), "\n")
		if !strings.Contains(plan, "USING COVERING INDEX "+index) && !strings.Contains(plan, "USING INDEX "+index) {
			t.Errorf("%s\nplan:\n%s\nwant a search of %s", q, plan, index)
		}
	}
}

// TestMigration7AddsMigratedRowsAndBoundsTheDroppedCount: a read model at
// schema version 6 gains hk_migrated_rows (empty: migrations recorded
// before it keep no row) and the partial index of the superseded effects
// no correction replaced, in place; sync health's count of the rows
// dropped writes left searches that index (superseded effects are never
// pruned: a scan of them grew with the store's history), and its count of
// the rows migrations left differing looks up open conflicts in their
// partial index (resolved ones are never pruned either).
func TestMigration7AddsMigratedRowsAndBoundsTheDroppedCount(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	h := newHistory()
	must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1)}))
	must(t, p.Close())
	downgradeTo7(t, path)
	execSQL(t, path, `DROP TABLE hk_migrated_rows`)
	execSQL(t, path, `DROP INDEX hk_outbox_dropped`)
	execSQL(t, path, `DROP INDEX hk_conflicts_open`)
	execSQL(t, path, `UPDATE hk_meta SET value = '6' WHERE key = 'schema_version'`)
	p = openAt(t, path)
	defer p.Close()
	if p.Checkpoint() != 1 {
		t.Fatalf("checkpoint after the migration: %d, want 1", p.Checkpoint())
	}
	wantRows(t, "objects after the migration", query(t, path,
		`SELECT name FROM sqlite_master WHERE name IN ('hk_migrated_rows', 'hk_outbox_dropped', 'hk_conflicts_open') ORDER BY name`),
		"hk_conflicts_open", "hk_migrated_rows", "hk_outbox_dropped")
	wantRows(t, "schema version", query(t, path, `SELECT value FROM hk_meta WHERE key = 'schema_version'`), strconv.Itoa(projector.SchemaVersion))
	for q, want := range map[string]string{
		projector.DroppedRowsQuery:  "INDEX hk_outbox_dropped",
		projector.MigratedRowsQuery: "INDEX hk_conflicts_open",
	} {
		plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+q, "t"), "\n")
		if !strings.Contains(plan, want) || strings.Contains(plan, "SCAN o") || strings.Contains(plan, "SCAN c") {
			t.Errorf("%s\nplan:\n%s\nwant %s", q, plan, want)
		}
	}
}

// TestReconcileOutcomeSearchesItsIndex: the outcome of every applied,
// blocked or conflicting effect is recorded on the conflict that queued it
// (UPDATE hk_conflicts … WHERE reconcile_effect = ?, once per effect
// outcome); that lookup searches hk_conflicts_reconcile (schema 1), never
// a scan of every conflict, resolved ones included.
func TestReconcileOutcomeSearchesItsIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	q := `UPDATE hk_conflicts SET reconcile_state = 'applied' WHERE reconcile_effect = 'e1'`
	plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+q), "\n")
	if !strings.Contains(plan, "INDEX hk_conflicts_reconcile") || strings.Contains(plan, "SCAN") {
		t.Errorf("%s\nplan:\n%s\nwant a search of hk_conflicts_reconcile", q, plan)
	}
}

// TestAnyOpenConflictSearchesItsIndex: whether any conflict is open (read
// once per group commit) is a search of the partial index of open
// conflicts, never a scan of every conflict, resolved ones included.
func TestAnyOpenConflictSearchesItsIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+projector.AnyOpenConflictQuery), "\n")
	if !strings.Contains(plan, "hk_conflicts_open") {
		t.Errorf("%s\nplan:\n%s\nwant a search of hk_conflicts_open", projector.AnyOpenConflictQuery, plan)
	}
}

// TestSettlementReadsSearchTheirIndexes: a settlement reads its effects'
// outbox rows by a search of the effect_id index per listed id, with no
// list subquery (a temporary table of the ids), and learns whether any
// conflict names a row reconcile by a search of hk_conflicts_reconcile,
// never a scan (row 4d: both run on every batch of 2,500 effects).
func TestSettlementReadsSearchTheirIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	for q, want := range map[string]string{
		strings.ReplaceAll(projector.EffectStatesQuery, "?1", `'["e1","e2"]'`): "SEARCH hk_outbox",
		projector.ReconcilingQuery: "INDEX hk_conflicts_reconcile",
	} {
		plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+q), "\n")
		if !strings.Contains(plan, want) || strings.Contains(plan, "SCAN hk_") || strings.Contains(plan, "LIST SUBQUERY") {
			t.Errorf("%s\nplan:\n%s\nwant %s, no scan, no list of the ids", q, plan, want)
		}
	}
}

// TestAppliedBatchFindsRowsByRowid: an applied batch's outbox update and
// visible-state insert and update find each listed row by its rowid (read by
// disjointRows in the same transaction), not by a second and third search
// of the effect_id index, and never scan the outbox (row 4d).
func TestAppliedBatchFindsRowsByRowid(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	r := strings.NewReplacer("?1", "'applied'", "?2", "1", "?3", `'{"1":"h"}'`)
	visible := strings.NewReplacer("?1", "1", "?2", `'{"1":"h"}'`)
	for _, q := range []string{projector.AppliedBatchUpdate, visible.Replace(projector.AppliedBatchVisible),
		visible.Replace(projector.AppliedBatchShown)} {
		plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+r.Replace(q)), "\n")
		if !strings.Contains(plan, "USING INTEGER PRIMARY KEY (rowid=?)") || strings.Contains(plan, "SCAN hk_outbox") ||
			strings.Contains(plan, "SCAN o") || strings.Contains(plan, "sqlite_autoindex_hk_outbox") {
			t.Errorf("%s\nplan:\n%s\nwant a rowid search of hk_outbox, no scan, no search of the effect_id index", q, plan)
		}
	}
}

// TestAppliedBatchReadsItsRowsByTheEffectIdIndex: an applied batch's read
// of its outbox rows (with whether each row has markers and a visible
// state) finds each listed effect by a search of the effect_id index and
// its markers and visible state by their primary keys, never a scan.
func TestAppliedBatchReadsItsRowsByTheEffectIdIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	q := strings.ReplaceAll(projector.DisjointRowsQuery, "?1", `'{"e1":"h"}'`)
	plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+q), "\n")
	for _, want := range []string{"sqlite_autoindex_hk_outbox_1 (effect_id=?)", "SEARCH u USING PRIMARY KEY (binding=?)",
		"SEARCH v USING PRIMARY KEY (binding=?)"} {
		if !strings.Contains(plan, want) || strings.Contains(plan, "SCAN o") || strings.Contains(plan, "SCAN v") {
			t.Errorf("%s\nplan:\n%s\nwant %s, no scan", q, plan, want)
		}
	}
}

// TestShownCellsReadPayloadsByRowid: the shown cells of an applied
// batch's Input rows read their payloads finding each outbox row by its rowid
// (read by disjointRows in the same transaction), never by a scan of the
// outbox or a search of the effect_id index.
func TestShownCellsReadPayloadsByRowid(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	q := strings.ReplaceAll(projector.QueuedPayloadsQuery, "?1", `'[1,2]'`)
	plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+q), "\n")
	if !strings.Contains(plan, "USING INTEGER PRIMARY KEY (rowid=?)") || strings.Contains(plan, "SCAN o") ||
		strings.Contains(plan, "sqlite_autoindex_hk_outbox") {
		t.Errorf("%s\nplan:\n%s\nwant a rowid search of hk_outbox, no scan, no search of the effect_id index", q, plan)
	}
}

// TestClaimableSearchesInQueueOrderWithoutSort: a claim reads each state's
// heads by a search of hk_outbox_state in its own order (rowid, which is
// queue order), never a sort of the whole backlog in a temporary b-tree
// (row 4c: the claim sorted every pending effect on each pass).
func TestClaimableSearchesInQueueOrderWithoutSort(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	q := strings.NewReplacer("?1", "'pending'", "?2", "'s'", "?3", "1", "?4", "'x'", "?5", "10").Replace(projector.ClaimableQuery)
	plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+q), "\n")
	if !strings.Contains(plan, "INDEX hk_outbox_state") || strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN o") {
		t.Errorf("%s\nplan:\n%s\nwant a search of hk_outbox_state without a temporary b-tree", q, plan)
	}
}
