package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Inbound side (issue 6, seed 001 "Inbound User_Input flow").
//
// Policy, in one place:
//   - People edit only user-owned fields (tag option `user`) on <E>_Input.
//     The key column and the anchor column (__hikoutei_row_id) are
//     system-owned: an edited key is quarantined (key_edited), an edited
//     anchor makes the row one without a known anchor.
//   - A row without a known anchor (typed or pasted by a person, blank or
//     unknown __hikoutei_row_id) is evidence, never an insert: the store
//     creates entities only from application commits.
//   - A malformed cell (number in a text column C01, inexact integer C02,
//     formula C03, error value, merged cell, edge-whitespace key C11) and a
//     duplicated anchor (I16) quarantine the whole row: nothing of it is
//     written into an entity table. An NFD retype equals its NFC value and
//     is not an edit (C11).
//   - A blank is an edit only if the sheet last showed a non-empty value
//     (C04); a tab that suddenly reads empty is flagged as a suspected mass
//     deletion and nothing is applied row by row. A row gone from the tab is
//     evidence of the deletion of that key, never an entity removal nor an
//     overwrite of a neighbour; a sort changes nothing (C06).
//   - An accepted edit updates canonical state and the entity in the same
//     commit (entity.persisted + observation.accepted) and is not echoed:
//     the row's visible hash becomes the observed hash, and only the
//     <E>_System row is rewritten.
//   - Value A against canonical B where both moved since the sheet last
//     showed the field opens a candidate and a conflict (I11, conflicts.go).

// Polling cadence (seed 001 "Polling cadence configuration").
const (
	// EnvPollingInterval sets SyncOptions.PollingInterval, in milliseconds.
	EnvPollingInterval = "HIKOUTEI_SYNC_POLLING_INTERVAL_MS"
	// EnvFullScanInterval sets SyncOptions.FullScanInterval, in milliseconds.
	EnvFullScanInterval = "HIKOUTEI_SYNC_FULL_SCAN_INTERVAL_MS"
	// DefaultPollingInterval and DefaultFullScanInterval apply when neither
	// the option nor the env var is set (SYNC_POLLING_INTERVAL_MS,
	// SYNC_FULL_SCAN_INTERVAL_MS = 60,000).
	DefaultPollingInterval  = 60 * time.Second
	DefaultFullScanInterval = 60 * time.Second
)

// resolveCadence fills the polling cadences: an explicit positive option
// wins; otherwise the env var (absent or "" = default) must be a plain
// positive decimal integer of milliseconds within 2^53-1 — no sign, hex,
// exponent, fraction, leading zero or white space; a value beyond what a
// time.Duration holds (≈ 292 years) is clamped. Errors wrap
// ErrSyncStartup (I20).
func resolveCadence(o *SyncOptions) error {
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	for _, c := range []struct {
		opt *time.Duration
		env string
		def time.Duration
	}{{&o.PollingInterval, EnvPollingInterval, DefaultPollingInterval}, {&o.FullScanInterval, EnvFullScanInterval, DefaultFullScanInterval}} {
		if *c.opt > 0 {
			continue
		}
		if *c.opt < 0 {
			return fmt.Errorf("%w: negative polling interval", ErrSyncStartup)
		}
		*c.opt = c.def
		v, ok := lookup(c.env)
		if !ok || v == "" {
			continue
		}
		ms, err := ParseIntervalMS(v)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrSyncStartup, c.env, err)
		}
		*c.opt = time.Duration(min(ms, maxIntervalMS)) * time.Millisecond
	}
	return nil
}

// maxIntervalMS is the longest cadence a time.Duration holds (≈ 292
// years); larger safe integers are accepted and clamped to it.
const maxIntervalMS = math.MaxInt64 / int64(time.Millisecond)

// ErrInvalidInterval: a cadence value is not a plain positive decimal
// integer of milliseconds (wrapped in ErrSyncStartup at Open, I20).
var ErrInvalidInterval = errors.New("invalid_polling_interval")

// ParseIntervalMS parses a cadence in milliseconds: ASCII digits only, no
// leading zero, value in [1, 2^53-1]. Errors: ErrInvalidInterval.
func ParseIntervalMS(v string) (int64, error) {
	if v == "" || len(v) > 16 || v[0] == '0' {
		return 0, fmt.Errorf("%w: %q", ErrInvalidInterval, v)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, fmt.Errorf("%w: %q", ErrInvalidInterval, v)
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > 1<<53-1 {
		return 0, fmt.Errorf("%w: %q", ErrInvalidInterval, v)
	}
	return n, nil
}

// Poller returns the User_Input poller once the spreadsheet is provisioned
// (nil before, or without sync). In Manual mode tests and tools drive its
// passes: Poll, FullScan, Cleanup.
func (s *Store) Poller() *effects.Poller {
	if s.sync == nil {
		return nil
	}
	s.sync.inboundMu.Lock()
	defer s.sync.inboundMu.Unlock()
	if s.sync.poller != nil || s.sync.workbook == nil {
		return s.sync.poller
	}
	var tabs []string
	for _, d := range s.defsInOrder {
		if hasUserFields(d) {
			tabs = append(tabs, layout.InputTabName(d.name))
		}
	}
	o := s.sync.opts
	s.sync.poller, _ = effects.NewPoller(effects.PollerConfig{Provider: o.Provider, Workbook: s.sync.workbook, Inbound: s,
		Tabs: tabs, Clock: s.opts.Clock, Logger: s.log, Interval: o.PollingInterval, FullScanInterval: o.FullScanInterval,
		CleanupInterval: o.ReconcileInterval, Wake: o.PollWake})
	return s.sync.poller
}

// startPoller runs the poller next to the dispatcher until the returned
// stop is called (superviseSync).
func (s *Store) startPoller(parent context.Context) func() {
	p := s.Poller()
	if p == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := p.Run(ctx); err != nil {
			s.log.Error("inbound poller stopped", "err", err.Error())
		}
	}()
	return func() { cancel(); <-done }
}

// Expectations implements effects.Inbound.
func (s *Store) Expectations(tabs []string) (map[string]effects.TabExpectation, uint64, error) {
	out := map[string]effects.TabExpectation{}
	var base uint64
	err := s.onWriter(func() error {
		base = s.proj.Checkpoint()
		for _, t := range tabs {
			x, err := s.tabExpectation(t)
			if err != nil {
				return err
			}
			out[t] = x
		}
		return nil
	})
	return out, base, err
}

func (s *Store) tabExpectation(tab string) (effects.TabExpectation, error) {
	x, err := s.proj.TabExpectation(tab)
	return effects.TabExpectation{Rows: x.Rows, Evidence: x.Evidence, Missing: x.Missing, Flagged: x.Flagged}, err
}

// Observe implements effects.Inbound: it decides every escalated tab in
// ONE fenced commit (see the policy at the top of this file).
func (s *Store) Observe(base uint64, tabs map[string]effects.TabObservation, full bool) (effects.ObserveStats, error) {
	var st effects.ObserveStats
	err := s.onWriter(func() error {
		ob := &observer{s: s, b: newUnitBuilder(s, nil, nil), now: s.opts.Clock.Now(), base: base, full: full, st: &st}
		for _, t := range sortedTabs(tabs) {
			if err := ob.tab(tabs[t]); err != nil {
				return err
			}
		}
		st.Events = ob.b.count()
		return ob.b.commit()
	})
	return st, err
}

func sortedTabs[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// observer decides one observation.
type observer struct {
	s    *Store
	b    *unitBuilder
	now  time.Time
	base uint64
	full bool // a safety full scan: every row is re-derived
	st   *effects.ObserveStats
	// per tab
	tabName string
	spec    layout.TabSpec
	def     *EntityDef
	active  map[string]projector.QuarantineRow
	found   map[string]bool
	byRow   map[string][]string // active evidence ids by row hash (partial reads)
	hold    bool                // a row shifted under a partial read: clear no evidence this pass
}

// Evidence reasons recorded by the observer (stable snake_case codes;
// cell decoding adds cell.Reason*).
const (
	ReasonRowWithoutAnchor = "row_without_anchor"
	ReasonUnknownAnchor    = "unknown_anchor"
	ReasonOrphanRow        = "orphan_row"
	ReasonDuplicateAnchor  = "duplicate_anchor"
	ReasonKeyEdited        = "key_edited"
	ReasonRowDeleted       = projector.ReasonRowDeleted
	ReasonMassDeletion     = projector.ReasonMassDeletion
	ReasonTabBlocked       = "tab_blocked"
)

func (ob *observer) tab(o effects.TabObservation) error {
	g := o.Grid
	if err := ob.begin(g.Tab); err != nil {
		return err
	}
	if g.Err != nil {
		// Blocked (header drift, C05; or missing): rows are not read, so
		// their evidence stays as it is.
		ob.evidence(aggregates.TypeObservationRejected, "", 0, "", ReasonTabBlocked, "", g.Err.Error())
		return nil
	}
	if g.Partial && o.Values == nil {
		return fmt.Errorf("hikoutei: partial grid read of %s without the values read it completes", g.Tab)
	}
	exp, err := ob.expectation(g.Tab, o.Expect)
	if err != nil {
		return err
	}
	shown := ob.shownRows(o)
	copies := make(map[string]int, len(shown))
	for _, r := range shown {
		if r.anchor != "" {
			copies[r.anchor]++
		}
	}
	if len(shown) == 0 && len(exp.Rows) > 0 { // C04: suddenly empty
		ob.evidence(aggregates.TypeObservationRejected, "", 0, "", ReasonMassDeletion, "", fmt.Sprintf("%d expected rows", len(exp.Rows)))
		return ob.clearGone()
	}
	for i := range shown {
		if err := ob.shown(&shown[i], copies[shown[i].anchor], exp); err != nil {
			return err
		}
	}
	for a := range exp.Rows { // C06: a deleted row is evidence of the deletion of that key
		if copies[a] == 0 {
			ob.evidence(aggregates.TypeObservationRejected, a, 0, "", ReasonRowDeleted, "", "")
		}
	}
	return ob.clearGone()
}

// begin resets the per-tab state for tab.
func (ob *observer) begin(tab string) error {
	var err error
	ob.tabName, ob.found, ob.byRow, ob.hold = tab, map[string]bool{}, nil, false
	ob.spec, _ = ob.s.sync.schema.Tab(tab)
	ob.def = ob.s.byName[ob.spec.Entity]
	ob.active, err = ob.s.proj.ActiveQuarantine(tab)
	return err
}

// expectation is the tab's expectation: x, the one the pass certified its
// values read against at base, while the read model is still at base (it
// is then the same), else computed afresh.
func (ob *observer) expectation(tab string, x *effects.TabExpectation) (effects.TabExpectation, error) {
	if x != nil && ob.s.proj.Checkpoint() == ob.base {
		return *x, nil
	}
	return ob.s.tabExpectation(tab)
}

// shown decides one non-blank row: a shifted row is deferred (and the
// tab's evidence held); a row certified by the values read keeps its
// evidence; a row read with grid data is decided, unless (outside a full
// scan) it shows exactly the system's last write.
func (ob *observer) shown(sr *shownRow, copies int, exp effects.TabExpectation) error {
	ob.st.Rows++
	switch {
	case sr.shifted:
		ob.st.Deferred++
		ob.hold = true
		return nil
	case sr.grid == nil:
		ob.keep(sr.hash)
		return nil
	}
	r := sr.grid
	if !ob.full && r.Anchor != "" && copies == 1 && plainCells(r.Cells) && exp.Rows[r.Anchor] == rowHash(r.Cells) {
		return nil // shows exactly the system's last write: only a full scan re-derives it
	}
	return ob.row(r, copies)
}

// keep marks as still shown the active evidence of a row the pass's values
// read certified and the partial grid read left out: every entry recorded
// for the same full-row hash (the hash covers every cell, the anchor cell
// too, so the row shows exactly what that evidence recorded).
func (ob *observer) keep(hash string) {
	if ob.byRow == nil {
		ob.byRow = make(map[string][]string, len(ob.active))
		for id, q := range ob.active {
			ob.byRow[q.RowHash] = append(ob.byRow[q.RowHash], id)
		}
	}
	for _, id := range ob.byRow[hash] {
		ob.found[id] = true
	}
}

// clearGone clears active evidence of the tab that this read no longer
// shows; nothing while a row shifted under a partial read (ob.hold).
func (ob *observer) clearGone() error {
	if ob.hold {
		return nil
	}
	for _, id := range sortedTabs(ob.active) {
		if !ob.found[id] {
			ob.add(aggregates.InboundEvent(aggregates.TypeRowQuarantineCleared, map[string]any{"tab": ob.tabName,
				"quarantine_id": id, "anchor": ob.active[id].Anchor}, ob.now))
		}
	}
	return nil
}

func (ob *observer) add(e events.Event) { ob.b.add(aggregates.InboundStream(ob.tabName), e) }

// evidence records a quarantine/evidence event unless the same evidence is
// already active (idempotent polls).
func (ob *observer) evidence(typ, anchor string, sheetRow int, rowHash, reason, column, detail string) {
	id := aggregates.QuarantineID(ob.tabName, anchor, rowHash, reason)
	ob.found[id] = true
	if _, ok := ob.active[id]; ok {
		return
	}
	ob.active[id] = projector.QuarantineRow{ID: id}
	ob.st.Quarantined++
	p := map[string]any{"tab": ob.tabName, "anchor": anchor, "sheet_row": int64(sheetRow), "row_hash": rowHash,
		"reason": reason, "column": column, "detail": detail, "quarantine_id": id}
	if ob.def != nil && anchor != "" {
		p["entity"], p["id"] = ob.def.name, anchor
	}
	ob.add(aggregates.InboundEvent(typ, p, ob.now))
}

func blankObserved(cells []cell.Observed) bool {
	for _, c := range cells {
		if c.Formula != "" || c.ErrorType != "" {
			return false
		}
		if s, ok := c.Value.(string); c.Value != nil && (!ok || s != "") {
			return false
		}
	}
	return true
}

// plainCells reports whether no cell of a row is a formula, an error
// value or part of a merge.
func plainCells(cells []cell.Observed) bool {
	for _, c := range cells {
		if c.Formula != "" || c.ErrorType != "" || c.Merged {
			return false
		}
	}
	return true
}

// rowHash is the full-row visible hash of a grid row, as a values read of
// the same row hashes it.
func rowHash(cells []cell.Observed) string {
	vals := make([]any, len(cells))
	for i, c := range cells {
		vals[i] = c.Value
	}
	return cell.VisibleHash(vals)
}

func (ob *observer) row(r *sheetsio.GridRow, copies int) error {
	h := rowHash(r.Cells)
	quarantine := func(anchor, reason, column string) {
		ob.evidence(aggregates.TypeRowQuarantined, anchor, r.SheetRow, h, reason, column, "")
	}
	anchorCol := ob.spec.Columns[ob.spec.Anchor]
	if _, err := cell.DecodeObserved(anchorCol, r.Cells[ob.spec.Anchor]); err != nil {
		quarantine("", reasonOf(err), anchorCol.Name)
		return nil
	}
	if r.Anchor == "" {
		ob.evidence(aggregates.TypeObservationRejected, "", r.SheetRow, h, ReasonRowWithoutAnchor, "", "")
		return nil
	}
	if copies > 1 {
		quarantine(r.Anchor, ReasonDuplicateAnchor, anchorCol.Name) // I16
		return nil
	}
	binding := layout.RowBindingID(ob.tabName, r.Anchor)
	_, _, bound, err := ob.s.proj.Visible(binding)
	if err != nil {
		return err
	}
	vals, exists, err := ob.s.proj.EntityValues(ob.def.name, r.Anchor)
	if err != nil {
		return err
	}
	switch {
	case !bound && !exists:
		ob.evidence(aggregates.TypeObservationRejected, r.Anchor, r.SheetRow, h, ReasonUnknownAnchor, "", "")
		return nil
	case !exists:
		ob.evidence(aggregates.TypeObservationRejected, r.Anchor, r.SheetRow, h, ReasonOrphanRow, "", "")
		return nil
	}
	decoded := make(map[string]any, len(ob.spec.Columns))
	for i, col := range ob.spec.Columns {
		if i == ob.spec.Anchor {
			continue
		}
		v, err := cell.DecodeObserved(col, r.Cells[i])
		if err != nil {
			quarantine(r.Anchor, reasonOf(err), col.Name)
			return nil
		}
		decoded[col.Name] = v
	}
	if decoded[ob.def.pk.name] != r.Anchor {
		quarantine(r.Anchor, ReasonKeyEdited, ob.def.pk.name)
		return nil
	}
	return ob.fields(r, h, binding, decoded, vals)
}

func reasonOf(err error) string {
	var me *cell.MalformedError
	if errors.As(err, &me) {
		return me.Reason
	}
	return "cell_malformed"
}

// fields classifies the user-owned cells of a bound row of a live entity.
func (ob *observer) fields(r *sheetsio.GridRow, h, binding string, decoded, canonical map[string]any) error {
	_, vrev, seq, err := ob.s.visibleSeq(binding)
	if err != nil {
		return err
	}
	inFlight, err := ob.s.proj.InFlight(binding)
	if err != nil {
		return err
	}
	if inFlight || seq > ob.base { // in transition: decided on the next pass
		ob.st.Deferred++
		return nil
	}
	sheet, err := ob.s.proj.SheetFields(binding)
	if err != nil {
		return err
	}
	edits, stale := map[string]any{}, map[string]any{}
	shown := map[string]any{}
	for _, f := range ob.def.fields {
		if f.owner != projector.OwnerUser {
			continue
		}
		a, err := projector.ShownHash(decoded[f.name])
		if err != nil {
			return err
		}
		b, err := projector.ShownHash(canonical[f.name])
		if err != nil {
			return err
		}
		sf := sheet[f.name]
		switch aggregates.ClassifyField(a, sf.ShownHash, b, sf.ShownKnown) {
		case aggregates.Edit:
			edits[f.name], shown[f.name] = decoded[f.name], a
		case aggregates.Stale:
			if sf.ConflictID == "" {
				stale[f.name] = canonical[f.name]
			}
		case aggregates.Conflict:
			if sf.CandidateHash == a {
				continue // already recorded: polls never re-open or resolve (I11)
			}
			if err := ob.candidate(r, h, binding, f.name, sf, a, decoded[f.name], canonical[f.name], vrev); err != nil {
				return err
			}
		}
	}
	if len(edits) > 0 {
		if err := ob.accept(r.Anchor, h, binding, edits, shown); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		// The row lost a system write (its guard met a person's edit of
		// another cell): write canonical again, guarded by what it shows.
		return ob.s.queueInto(ob.b, aggregates.Queue{Target: ob.s.target(ob.tabName, r.Anchor), Op: aggregates.OpUpdate,
			Values: stale, Entity: ob.def.name, ID: r.Anchor}, h, ob.now)
	}
	return nil
}

// accept turns a person's edits into canonical state and the entity in
// the same commit, without echo: only the System row is rewritten.
func (ob *observer) accept(anchor, h, binding string, edits, shown map[string]any) error {
	cur, err := ob.s.entityState(ob.def.name, anchor)
	if err != nil {
		return err
	}
	d, err := aggregates.DecidePersist(cur, aggregates.Persist{Entity: ob.def.name, ID: anchor, Values: edits}, ob.now)
	if err != nil || len(d.Events) == 0 {
		return err
	}
	ob.b.add(d.Stream, d.Events...)
	ob.st.Accepted++
	ob.add(aggregates.InboundEvent(aggregates.TypeObservationAccepted, map[string]any{"tab": ob.tabName, "anchor": anchor,
		"binding": binding, "entity": ob.def.name, "id": anchor, "fields": edits, "field_hashes": shown, "row_hash": h}, ob.now))
	sys := layout.SystemTabName(ob.def.name)
	return ob.s.queueInto(ob.b, aggregates.Queue{Target: ob.s.target(sys, anchor), Op: aggregates.OpUpdate, Values: edits,
		Entity: ob.def.name, ID: anchor}, "", ob.now)
}

// visibleSeq returns the binding's visible hash, revision and the log
// sequence that last set it.
func (s *Store) visibleSeq(binding string) (string, int64, uint64, error) {
	var h string
	var rev int64
	var seq uint64
	err := s.proj.VisibleSeq(binding, func(hash string, revision int64, at uint64) { h, rev, seq = hash, revision, at })
	return h, rev, seq, err
}

func (s *Store) entityState(entity, id string) (aggregates.EntityState, error) {
	row, err := s.proj.EntityState(entity, id)
	if err != nil {
		return aggregates.EntityState{}, err
	}
	st := aggregates.EntityState{Exists: row.Exists, Version: row.Version, Fields: make(map[string]aggregates.FieldState, len(row.Fields))}
	for name, f := range row.Fields {
		st.Fields[name] = aggregates.FieldState{Hash: f.Hash, Revision: f.Revision}
	}
	return st, nil
}

// queueInto adds an effect.queued for q to the builder; expected, when
// set, is the full-row hash its write is guarded by (instead of the
// binding's last visible hash).
func (s *Store) queueInto(b *unitBuilder, q aggregates.Queue, expected string, now time.Time) error {
	_, err := b.queue(q, expected, now)
	return err
}

// unitBuilder gathers the events of one fenced commit by stream, tracking
// each stream's expected version (and, on the writer's commit path, the
// group commit's earlier decisions through local/overlay).
type unitBuilder struct {
	s       *Store
	order   []string
	streams map[string]*events.StreamAppend
	local   map[string]uint64 // batchState.outbox of the unit being decided (nil outside a commit)
	overlay map[string]uint64
	err     error // first stream-version lookup failure
}

func newUnitBuilder(s *Store, local, overlay map[string]uint64) *unitBuilder {
	return &unitBuilder{s: s, streams: map[string]*events.StreamAppend{}, local: local, overlay: overlay}
}

// version is the stream's version after what the builder already holds.
func (b *unitBuilder) version(stream string) (uint64, error) {
	if sa, ok := b.streams[stream]; ok {
		return sa.ExpectedVersion + uint64(len(sa.Events)), nil
	}
	if v, ok := b.local[stream]; ok {
		return v, nil
	}
	if v, ok := b.overlay[stream]; ok {
		return v, nil
	}
	return b.s.w.Log().StreamVersion(stream)
}

// touched reports whether an earlier unit of the same group commit (or
// this builder) already appends to stream.
func (b *unitBuilder) touched(stream string) bool {
	_, inB := b.streams[stream]
	_, inL := b.local[stream]
	_, inO := b.overlay[stream]
	return inB || inL || inO
}

func (b *unitBuilder) add(stream string, evs ...events.Event) {
	sa, ok := b.streams[stream]
	if !ok {
		v, err := b.version(stream)
		if err != nil && b.err == nil {
			b.err = err // reported by appends' callers (commit, onEntityCommit)
		}
		sa = &events.StreamAppend{Stream: stream, ExpectedVersion: v}
		b.streams[stream], b.order = sa, append(b.order, stream)
	}
	sa.Events = append(sa.Events, evs...)
}

func (b *unitBuilder) queue(q aggregates.Queue, expected string, now time.Time) (string, error) {
	stream := aggregates.OutboxStream(q.Target.Binding)
	v, err := b.version(stream)
	if err != nil {
		return "", err
	}
	d, id, err := aggregates.DecideQueue(v, q, now)
	if err != nil {
		return "", err
	}
	if expected != "" {
		d.Events[0].Payload["expected_hash"] = expected
	}
	b.add(stream, d.Events...)
	return id, nil
}

func (b *unitBuilder) count() int {
	n := 0
	for _, sa := range b.streams {
		n += len(sa.Events)
	}
	return n
}

// appends returns the builder's stream appends and records their final
// versions in local (the writer's commit path).
func (b *unitBuilder) appends() []events.StreamAppend {
	out := make([]events.StreamAppend, 0, len(b.order))
	for _, name := range b.order {
		sa := b.streams[name]
		out = append(out, *sa)
		if b.local != nil {
			b.local[name] = sa.ExpectedVersion + uint64(len(sa.Events))
		}
	}
	return out
}

// commit appends everything as one fenced unit and projects it (writer
// goroutine only).
func (b *unitBuilder) commit() error {
	if b.err != nil {
		return b.err
	}
	var ds []aggregates.Decision
	for _, sa := range b.appends() {
		ds = append(ds, aggregates.Decision{Stream: sa.Stream, ExpectedVersion: sa.ExpectedVersion, Events: sa.Events})
	}
	return b.s.appendDecisions(ds)
}

// Cleanup implements effects.Inbound: surplus-row cleanup of the Input
// tabs (I21), every delete an effect guarded by the full-row hash read now
// (CAS, the dispatcher's OpDelete with ExpectedHash):
//   - duplicates of a bound key: when every row showing a live entity's
//     anchor is an identical copy of what the system last wrote, one copy
//     per pass (sheetsio.SurplusCopy);
//   - unambiguous orphans: a single row whose anchor names no live entity
//     and which shows exactly what the system last wrote.
//
// Rows referenced by active candidates or conflicts, rows with an effect in
// flight, duplicates that differ, and rows carrying a person's data stay
// for review. Rows without an anchor (empty-ID rows) are evidence only: the
// provider addresses rows by anchor, so they cannot be deleted by CAS.
func (s *Store) Cleanup(base uint64, grids map[string]*sheetsio.GridSnapshot) (int, error) {
	n := 0
	err := s.onWriter(func() error {
		b := newUnitBuilder(s, nil, nil)
		now := s.opts.Clock.Now()
		for _, t := range sortedTabs(grids) {
			g := grids[t]
			if g.Err != nil {
				continue
			}
			spec, _ := s.sync.schema.Tab(t)
			def := s.byName[spec.Entity]
			copies := map[string]int{}
			for _, r := range g.Rows {
				copies[r.Anchor]++
			}
			dupDone := map[string]bool{}
			for _, r := range g.Rows {
				if r.Anchor != "" && copies[r.Anchor] > 1 && !dupDone[r.Anchor] {
					dupDone[r.Anchor] = true
					ok, err := s.surplusDuplicate(t, def, g, r, base)
					if err != nil {
						return err
					}
					if ok { // one copy per pass: the binding's deletes are ordered (I07)
						if _, err := b.queue(aggregates.Queue{Target: s.target(t, r.Anchor), Op: aggregates.OpDelete, Entity: def.name, ID: r.Anchor},
							rowHash(r.Cells), now); err != nil {
							return err
						}
						n++
					}
				}
				if r.Anchor == "" || copies[r.Anchor] != 1 {
					continue
				}
				ok, err := s.unambiguousOrphan(t, def, r, base)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				if _, err := b.queue(aggregates.Queue{Target: s.target(t, r.Anchor), Op: aggregates.OpDelete, Entity: def.name, ID: r.Anchor},
					rowHash(r.Cells), now); err != nil {
					return err
				}
				n++
			}
		}
		return b.commit()
	})
	return n, err
}

// surplusDuplicate reports whether the rows showing r's anchor are
// identical copies of exactly what the system last wrote for a live
// entity, with nothing in flight and no candidate: one of them can go by
// full-row CAS (sheetsio.SurplusCopy picks which; any copy is the same).
func (s *Store) surplusDuplicate(tab string, def *EntityDef, g *sheetsio.GridSnapshot, r sheetsio.GridRow, base uint64) (bool, error) {
	_, exists, err := s.proj.EntityValues(def.name, r.Anchor)
	if err != nil || !exists {
		return false, err
	}
	binding := layout.RowBindingID(tab, r.Anchor)
	vh, _, seq, err := s.visibleSeq(binding)
	if err != nil || vh == "" || seq > base {
		return false, err
	}
	for _, o := range g.Rows {
		if o.Anchor == r.Anchor && (rowHash(o.Cells) != vh || !plainCells(o.Cells)) {
			return false, nil // the copies differ: ambiguous, left for review
		}
	}
	return s.untouched(binding)
}

// untouched: no effect in flight, no active candidate, no open conflict.
func (s *Store) untouched(binding string) (bool, error) {
	inFlight, err := s.proj.InFlight(binding)
	if err != nil || inFlight {
		return false, err
	}
	sheet, err := s.proj.SheetFields(binding)
	if err != nil {
		return false, err
	}
	for _, f := range sheet {
		if f.CandidateHash != "" || f.ConflictID != "" {
			return false, nil
		}
	}
	open, err := s.proj.Conflicts("binding = ? AND state = 'open'", binding)
	return err == nil && len(open) == 0, err
}

func (s *Store) unambiguousOrphan(tab string, def *EntityDef, r sheetsio.GridRow, base uint64) (bool, error) {
	binding := layout.RowBindingID(tab, r.Anchor)
	_, exists, err := s.proj.EntityValues(def.name, r.Anchor)
	if err != nil || exists {
		return false, err
	}
	vh, _, seq, err := s.visibleSeq(binding)
	if err != nil || vh == "" || seq > base || vh != rowHash(r.Cells) || !plainCells(r.Cells) {
		return false, err
	}
	return s.untouched(binding)
}
