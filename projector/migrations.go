package projector

// SchemaVersion is the version of the internal hk_ tables this build writes.
// Each entry of migrations moves the read model from version i to i+1; an
// older read model is migrated in place, a newer one is rebuilt.
const SchemaVersion = 8

// migrations[i] brings a read model from schema version i to i+1.
var migrations = []string{
	// 0 → 1: the internal tables.
	`CREATE TABLE hk_meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE hk_entity_state (
  entity   TEXT NOT NULL,
  id       TEXT NOT NULL,
  version  INTEGER NOT NULL,   -- the entity stream's version
  removed  INTEGER NOT NULL,   -- 1 once the entity was removed
  last_seq INTEGER NOT NULL,   -- log sequence of the last event applied
  -- canonical field state, JSON: {"field": {"hash": "xxh64:…", "rev": 3, "owner": "system"|"user"}}
  -- hash = events.Hash of the canonical value ('' while removed); rev rises by
  -- one per canonical change and never resets.
  fields   TEXT NOT NULL,
  PRIMARY KEY (entity, id)
) WITHOUT ROWID;
-- One row per field, for people and tools (sqlite3 CLI).
CREATE VIEW hk_field_state AS
  SELECT s.entity, s.id, f.key AS field,
         json_extract(f.value, '$.hash') AS value_hash,
         json_extract(f.value, '$.rev') AS revision,
         json_extract(f.value, '$.owner') AS owner
  FROM hk_entity_state AS s, json_each(s.fields) AS f;
CREATE TABLE hk_lease (
  role      TEXT PRIMARY KEY NOT NULL,
  writer_id TEXT NOT NULL,
  epoch     INTEGER NOT NULL,
  state     TEXT NOT NULL,     -- held | released
  host      TEXT NOT NULL,
  pid       INTEGER NOT NULL,
  operation TEXT NOT NULL,
  at        TEXT NOT NULL,
  seq       INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE hk_lease_history (
  seq       INTEGER PRIMARY KEY NOT NULL,
  role      TEXT NOT NULL,
  type      TEXT NOT NULL,     -- the lease event's catalogue type
  writer_id TEXT NOT NULL,
  epoch     INTEGER NOT NULL,
  state     TEXT NOT NULL,
  at        TEXT NOT NULL
);
CREATE TABLE hk_outbox (
  effect_id       TEXT PRIMARY KEY NOT NULL,
  spreadsheet     TEXT NOT NULL,    -- the sync target's name
  tab             TEXT NOT NULL,    -- logical tab
  anchor          TEXT NOT NULL,
  binding         TEXT NOT NULL,    -- row binding id (tab + anchor)
  stream_sequence INTEGER NOT NULL, -- order of effects on one binding (I07)
  op              TEXT NOT NULL,    -- append | update | delete
  payload         BLOB NOT NULL,    -- canonical encoding of the cell values
  payload_hash    TEXT NOT NULL,
  entity          TEXT NOT NULL,
  entity_id       TEXT NOT NULL,
  state           TEXT NOT NULL,    -- pending | processing | delivery_uncertain | applied | failed | superseded | conflict | blocked_candidate
  terminal        INTEGER NOT NULL DEFAULT 0,
  claim_token     TEXT,
  attempts        INTEGER NOT NULL DEFAULT 0,
  probes          INTEGER NOT NULL DEFAULT 0,
  due_at          TEXT,             -- retry or probe due time (UTC ms); NULL = now
  last_code       TEXT,
  written_hash    TEXT,             -- row hash after the applied write
  observed_hash   TEXT,             -- row hash found instead (guard failure evidence)
  expected_hash   TEXT,             -- set on a correction: the evidence it is guarded by
  superseded_by   TEXT,
  version         INTEGER NOT NULL, -- the effect stream's version
  queued_seq      INTEGER NOT NULL,
  updated_seq     INTEGER NOT NULL
);
CREATE INDEX hk_outbox_binding ON hk_outbox (binding, stream_sequence);
CREATE INDEX hk_outbox_state ON hk_outbox (state, spreadsheet);
CREATE INDEX hk_outbox_row ON hk_outbox (tab, anchor);
CREATE TABLE hk_visible_state (
  binding   TEXT PRIMARY KEY NOT NULL,
  tab       TEXT NOT NULL,
  anchor    TEXT NOT NULL,
  revision  INTEGER NOT NULL,   -- rises with every applied effect on the row
  hash      TEXT NOT NULL,      -- full-row visible hash after it ('' = row deleted)
  effect_id TEXT NOT NULL,
  seq       INTEGER NOT NULL
) WITHOUT ROWID;
-- Inbound side (issue 6). Conflicts: one per (binding, field, candidate
-- epoch); visible_hash NULL marks a legacy conflict without candidate
-- visible evidence, which never resolves (I14).
CREATE TABLE hk_conflicts (
  conflict_id        TEXT PRIMARY KEY NOT NULL,
  entity             TEXT NOT NULL,
  id                 TEXT NOT NULL,
  field              TEXT NOT NULL,
  tab                TEXT NOT NULL,
  anchor             TEXT NOT NULL,
  binding            TEXT NOT NULL,
  state              TEXT NOT NULL,    -- open | resolved
  canonical_revision INTEGER NOT NULL, -- the field's canonical revision at detection
  candidate_hash     TEXT,             -- events.Hash of the sheet value A
  candidate_epoch    INTEGER,
  visible_revision   INTEGER,          -- candidate-time full-row visible revision
  visible_hash       TEXT,             -- candidate-time full-row visible hash (NULL: legacy)
  system_value       TEXT,             -- rendering of B for the audit row
  sheet_value        TEXT,             -- rendering of A for the audit row
  reconcile_effect   TEXT,             -- acknowledge_system's row reconcile effect id
  reconcile_state    TEXT,             -- its outcome: pending | applied | blocked_candidate
  opened_seq         INTEGER NOT NULL,
  opened_at          TEXT NOT NULL,
  resolved_seq       INTEGER,
  resolved_at        TEXT,
  resolution         TEXT              -- system_wins | system_acknowledged
);
CREATE INDEX hk_conflicts_entity ON hk_conflicts (entity, id, state);
CREATE INDEX hk_conflicts_reconcile ON hk_conflicts (reconcile_effect);
-- sheet_visible_field_state (seed 000): per Input-row field, the hash the
-- sheet last showed (system write applied or observation accepted) and the
-- active candidate with its epoch and candidate-time row evidence.
CREATE TABLE hk_sheet_field_state (
  binding            TEXT NOT NULL,
  field              TEXT NOT NULL,
  tab                TEXT NOT NULL,
  anchor             TEXT NOT NULL,
  shown_hash         TEXT,             -- NULL: never confirmed
  shown_seq          INTEGER,
  candidate_hash     TEXT NOT NULL DEFAULT '', -- '' = no active candidate
  candidate_epoch    INTEGER NOT NULL DEFAULT 0,
  candidate_row_hash TEXT NOT NULL DEFAULT '',
  candidate_visible_revision INTEGER NOT NULL DEFAULT 0,
  conflict_id        TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (binding, field)
) WITHOUT ROWID;
-- Current evidence: malformed/ambiguous rows, deleted rows, suspected mass
-- deletions. active = 0 once the evidence no longer shows in the tab.
CREATE TABLE hk_quarantine (
  quarantine_id TEXT PRIMARY KEY NOT NULL,
  tab           TEXT NOT NULL,
  anchor        TEXT NOT NULL,     -- '' for rows without an anchor / tab-level evidence
  sheet_row     INTEGER NOT NULL,  -- 1-based row at observation time (informational)
  row_hash      TEXT NOT NULL,     -- cell.VisibleHash of the row ('' for missing rows)
  reason        TEXT NOT NULL,     -- stable code, e.g. cell_type_mismatch, duplicate_anchor, row_deleted
  column_name   TEXT NOT NULL,
  active        INTEGER NOT NULL,
  seq           INTEGER NOT NULL,
  cleared_seq   INTEGER
);
CREATE INDEX hk_quarantine_tab ON hk_quarantine (tab, active);
-- Append-only history of every inbound event (accepted, rejected,
-- quarantined, candidates, conflicts), for audits.
CREATE TABLE hk_evidence (
  seq    INTEGER NOT NULL,
  n      INTEGER NOT NULL,
  kind   TEXT NOT NULL,     -- the event type
  tab    TEXT,
  anchor TEXT,
  entity TEXT,
  id     TEXT,
  field  TEXT,
  reason TEXT NOT NULL,
  detail TEXT,
  PRIMARY KEY (seq, n)
);`,
	// 1 → 2: when each effect was queued (the clock reading of its
	// effect.queued), for the oldest pending effect's age in sync health.
	// Effects queued before this migration keep NULL (age unknown).
	`ALTER TABLE hk_outbox ADD COLUMN queued_at TEXT;`,
	// 2 → 3: values the sheet shows as markers (effect.value_unwritable).
	`CREATE TABLE hk_unwritable (
  binding   TEXT NOT NULL,
  field     TEXT NOT NULL,
  tab       TEXT NOT NULL,
  entity    TEXT NOT NULL,
  id        TEXT NOT NULL,      -- the entity's key (never the value)
  reason    TEXT NOT NULL,      -- value_too_large | value_not_finite | value_out_of_range | value_unsupported
  chars     INTEGER NOT NULL,   -- the value's length for value_too_large, else 0
  effect_id TEXT NOT NULL,      -- the applied effect that wrote the marker
  seq       INTEGER NOT NULL,
  PRIMARY KEY (binding, field)
) WITHOUT ROWID;`,
	// 3 → 4: people resolve conflicts (accept_user, I30): the active
	// candidate's value, who resolved each conflict, and the first outcome
	// of each resolution command id (idempotency). Candidates recorded
	// before keep a NULL value: "use the sheet's value" is blocked for
	// them until the read model is rebuilt from the log (hikoutei replay).
	`ALTER TABLE hk_sheet_field_state ADD COLUMN candidate_value BLOB; -- events.EncodeCanonical of the candidate (NULL: none/unknown)
ALTER TABLE hk_conflicts ADD COLUMN resolved_by TEXT;            -- application | cli | sheet ('' before actors)
CREATE TABLE hk_commands (
  command_id         TEXT PRIMARY KEY NOT NULL,
  conflict_id        TEXT NOT NULL,
  resolution         TEXT NOT NULL,    -- system_acknowledged (keep system) | use_sheet
  canonical_revision INTEGER NOT NULL, -- the fence the command carried
  candidate_hash     TEXT NOT NULL,
  candidate_epoch    INTEGER NOT NULL,
  outcome            TEXT NOT NULL,    -- applied | stale | rejected
  reason             TEXT NOT NULL,
  reconcile_effect   TEXT NOT NULL,
  seq                INTEGER NOT NULL
) WITHOUT ROWID;`,
	// 4 → 5: the poll's per-tab reads without scanning every tab: what an
	// Input tab is expected to show (a covering index: no lookup per row
	// of a 171,075-row tab) and its active candidates (a partial index:
	// almost no row has one).
	`CREATE INDEX hk_visible_state_tab ON hk_visible_state (tab, anchor, hash, seq);
CREATE INDEX hk_sheet_field_candidates ON hk_sheet_field_state (tab) WHERE candidate_hash != '';`,
	// 5 → 6: the durable checkpoints of named subscriptions (the root's
	// Store.Subscribe). They live here so that a consumer whose own state
	// is in this database commits its checkpoint in the same transaction.
	// Not derived from the log: Digest and a rebuild leave them out.
	`CREATE TABLE hk_subscriptions (
  name       TEXT PRIMARY KEY NOT NULL,
  mode       TEXT NOT NULL,    -- callback | transactional
  checkpoint INTEGER NOT NULL  -- the last seq handled and recorded
) WITHOUT ROWID;`,
	// 6 → 7: the rows a layout migration left differing from canonical
	// state (sheet.layout_migrated rows[].differs), so sync health counts
	// them across a restart; and partial indexes of the superseded effects
	// no correction replaced and of the open conflicts, so sync health's
	// counts read those few, not every superseded effect or resolved
	// conflict (never pruned). Migrations recorded before keep no row here.
	`CREATE TABLE hk_migrated_rows (
  tab    TEXT NOT NULL,
  anchor TEXT NOT NULL,
  stale  INTEGER NOT NULL,  -- 1: the row shows the store's last write and canonical state moved on; 0: it shows cells the store did not write
  seq    INTEGER NOT NULL,  -- the layout migration's event: the row differs while its visible state is that event's
  PRIMARY KEY (tab, anchor)
) WITHOUT ROWID;
CREATE INDEX hk_outbox_dropped ON hk_outbox (spreadsheet, tab) WHERE state = 'superseded' AND coalesce(superseded_by, '') = '';
CREATE INDEX hk_conflicts_open ON hk_conflicts (binding) WHERE state = 'open';`,
	// 7 → 8: the number of effects in each state, kept by the statements
	// that insert an outbox row or move its state, in the same projection
	// transaction (outbox_counts.go), so Stats, every metrics scrape,
	// status and sync health read a few rows instead of counting every
	// effect ever queued (applied ones are never pruned). Seeded from the
	// rows already there. A state's row stays at 0 once its last effect
	// left it; the readers leave such rows out, as the count by state did.
	// Derived from hk_outbox as an index is: Digest and Dump leave it out.
	`CREATE TABLE hk_outbox_counts (
  state TEXT PRIMARY KEY NOT NULL,  -- an effect state (hk_outbox.state)
  n     INTEGER NOT NULL            -- the outbox rows in that state
) WITHOUT ROWID;
INSERT INTO hk_outbox_counts (state, n) SELECT state, count(*) FROM hk_outbox GROUP BY state;`,
}
