package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/disk"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
)

// storeStatus is what `hikoutei status` reports.
type storeStatus struct {
	Dir        string  `json:"dir"`
	Running    bool    `json:"running"`
	Holder     string  `json:"holder,omitempty"`
	Operation  string  `json:"operation,omitempty"`
	LeaseEpoch int64   `json:"lease_epoch"`
	LeaseState string  `json:"lease_state"`
	LogHead    *uint64 `json:"log_head,omitempty"` // absent while a writer holds log.db
	// Checkpoint is null when no read model could be read to tell it
	// (read_model_code says why), never a 0 that looks like a position.
	Checkpoint   *uint64          `json:"checkpoint"`
	Outbox       map[string]int64 `json:"outbox"`
	OpenConflict int64            `json:"open_conflicts"`
	Quarantined  int64            `json:"quarantined"`
	// LastEvidence is the log sequence of the newest inbound evidence (what
	// the pollers last recorded: an accepted edit, a quarantine, a conflict).
	LastEvidence int64  `json:"last_inbound_evidence_seq"`
	Divergence   string `json:"divergence,omitempty"` // sync stopped: the sheet's authority names another writer
	// Unwritable lists the values the sheet shows as a marker because
	// Google Sheets cannot hold them (never the values themselves).
	Unwritable []unwritableValue `json:"unwritable"`
	// MisdirectedWrites counts updates whose cells landed on another row
	// (C06, sync.write_misdirected); MisdirectedCells the cells they
	// overwrote, whose earlier content may have been an unpolled edit
	// (`hikoutei audit` names them).
	MisdirectedWrites int64 `json:"misdirected_writes"`
	MisdirectedCells  int64 `json:"misdirected_cells"`
	// LogGaps are the records the log lost, as recorded when the store
	// found its read model ahead of the log.
	LogGaps string `json:"log_gaps,omitempty"`
	// OutboxReasons counts the failed and blocked_candidate effects by
	// state, then reason code; QuarantineReasons the active quarantine by
	// reason code. Absent when there are none.
	OutboxReasons     map[string]map[string]int64 `json:"outbox_reasons,omitempty"`
	QuarantineReasons map[string]int64            `json:"quarantine_reasons,omitempty"`
	// reasons keeps both in the read model's order (most frequent first)
	// for the human output.
	reasons statusReasons
	// SyncHealth is each sync target's health by tab: while a process
	// holds the store, what it answers over its administrative channel
	// (its /healthz view, reconciliation notes and provider failures
	// included), else from the read model alone.
	SyncHealth []syncHealthJSON `json:"sync_health"`
	// SyncHealthSource says which: running_store or read_model.
	SyncHealthSource string `json:"sync_health_source"`
	// SyncHealthUnreachable is why a running store's health is missing
	// (a stable code, e.g. admin_channel_absent); absent otherwise.
	SyncHealthUnreachable string `json:"sync_health_unreachable,omitempty"`
	// LeaseLeftover says that lease.toml names a process that no longer
	// holds the store (killed or crashed: no process holds it; running is
	// false); absent otherwise.
	LeaseLeftover string `json:"lease_leftover,omitempty"`
	// CommitsRefused is why the running store refuses commits now (its
	// Health().Local: code and message, e.g. log_file_replaced: …);
	// absent while it commits, or when no process holds the store.
	CommitsRefused     string `json:"commits_refused,omitempty"`
	CommitsRefusedCode string `json:"commits_refused_code,omitempty"`
	// Retention is the running store's retention policy state (off, on,
	// failing, not_running), with why it fails or does not run and the
	// failure's code; absent when no process holds the store.
	Retention       string `json:"retention,omitempty"`
	RetentionDetail string `json:"retention_detail,omitempty"`
	RetentionCode   string `json:"retention_code,omitempty"`
	// SegmentsUnreachable is why the running store's last read or write of
	// a sealed segment could not reach the store holding them (its
	// Health().Segments), with its code (segment_store_unavailable), or
	// segment_missing naming a vouched segment the store did not list;
	// absent while it answers, or when no process holds the store.
	SegmentsUnreachable     string `json:"segments_unreachable,omitempty"`
	SegmentsUnreachableCode string `json:"segments_unreachable_code,omitempty"`
	// LogMissing: log.db is missing or empty while the running process
	// still holds the store (it has the removed or replaced log open, the
	// only copy of the records); RescueCommand is what saves it.
	LogMissing    bool   `json:"log_missing,omitempty"`
	RescueCommand string `json:"rescue_command,omitempty"`
	// Disk is what the store keeps on disk (hot log, sealed segments and
	// where they live, read model) and the filesystem's free space.
	Disk *diskStatus `json:"disk,omitempty"`
	// ReadModelCode is read_model_missing when the store has a log but no
	// read.sqlite and no process holds it (a restore killed before it
	// built it, or the file removed), read_model_invalid when read.sqlite
	// cannot be read (damaged, or not a file: ReadModelDetail says why);
	// NextStep is the command that builds it. The read model's counts are
	// then absent (zero) and the lease is the log's (when no process
	// holds it).
	ReadModelCode   string `json:"read_model_code,omitempty"`
	ReadModelDetail string `json:"read_model_detail,omitempty"`
	NextStep        string `json:"next_step,omitempty"`
	// Leftovers are the files interrupted commands (a replay --dir or
	// restore rebuilding the read model, a compact) left in the store
	// directory, each with its reason code, listed when no process has
	// the log open; and the marks of adoptions whose process no longer
	// runs (adopt_interrupted), with what they left and what to do.
	Leftovers []leftoverJSON `json:"leftovers,omitempty"`
}

// statusReasons are the reason counts status prints, in order.
type statusReasons struct {
	outbox     map[aggregates.EffectState][]projector.ReasonCount
	quarantine []projector.ReasonCount
}

// outboxStateNotes tell apart, in the human output, an outbox state whose
// name reads like another line of status.
var outboxStateNotes = map[string]string{
	string(aggregates.EffectConflict): " (writes that met a person's edit; open conflicts are below)",
}

// reasonStates are the outbox states whose entries status counts by
// reason: the writes that did not land and are not merely waiting.
var reasonStates = []aggregates.EffectState{aggregates.EffectFailed, aggregates.EffectBlocked}

// unwritableValue is one cell the sheet shows as a marker.
type unwritableValue struct {
	Entity string `json:"entity"`
	ID     string `json:"id"`
	Field  string `json:"field"`
	Tab    string `json:"tab"`
	Reason string `json:"reason"`
	Chars  int64  `json:"chars,omitempty"`
}

// maxUnwritableLines bounds the unwritable values status lists one by one.
const maxUnwritableLines = 20

func newStatusCmd() *cobra.Command {
	var dir, segments string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --dir DIR [--json]",
		Short: "Show lease holder and epoch, log head, checkpoint, outbox by state, conflicts, quarantine, last inbound evidence, failures by reason, disk use, sync health by tab, unwritable values",
		Long: `status reads a store without changing it. It works while the store runs:
the read model is read through SQLite's WAL, the holder from lease.toml. The log
head is shown only when no process holds log.db (while one does, the
checkpoint equals the head after every commit). Sync health is shown per tab
(ok, behind, diverged, blocked with its reason, pending effects and the
oldest one's age): while a process holds the store, as that process sees
it (asked over its administrative channel); otherwise, or when it does not
answer (the reason code is shown), derived from the read model. Disk: the
hot log (log.db), the sealed segments (count, bytes, and where they live: the
folder, or with --segments the object store's scheme and bucket, never its
credentials), the read model
and the free space of the filesystem holding the store, with disk_filling
above 90 % used and disk_full above 98 %.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := requireStoreOrHolder(dir); err != nil {
				return err
			}
			segURL, err := segmentsURL(segments)
			if err != nil {
				return err
			}
			now := time.Now()
			st, err := readStatus(dir, now)
			if err != nil {
				return err
			}
			if st.Disk, err = readDisk(dir, disk.Statfs{}, now); err != nil {
				return err
			}
			if segURL != "" {
				st.Disk.segmentsElsewhere(dir, segURL)
			} else {
				st.Disk.segmentsInFolder(cmd.Context(), dir)
			}
			st.addLiveHealth(cmd.Context())
			return errors.Join(printStatus(cmd, st, asJSON), st.readModelFailure())
		},
	}
	addDirFlag(cmd, &dir)
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

func readStatus(dir string, now time.Time) (storeStatus, error) {
	st := storeStatus{Dir: dir, Outbox: map[string]int64{}, SyncHealthSource: healthFromReadModel}
	if lf, err := events.ReadLeaseFile(dir); err == nil {
		st.Running, st.Holder, st.Operation = true, lf.Holder.String(), lf.Operation
		if holderGone(dir) {
			// Killed or crashed: the file lock died with the process.
			st.Running, st.Holder, st.Operation = false, "", ""
			st.LeaseLeftover = fmt.Sprintf("lease.toml names %s (operation %q), which no longer holds the store: a run that ended without closing (killed or crashed); the next open reconciles it",
				lf.Holder, lf.Operation)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		st.Holder = "lease.toml invalid: run hikoutei doctor"
	}
	head, hist, err := readLogHead(dir)
	switch {
	case err == nil:
		st.LogHead = &head
	case errors.Is(err, events.ErrStoreLogMissing) && st.Running:
		// Removed under the running process, which still holds it open:
		// the rest is the read model's and the process's to answer.
		st.LogMissing, st.RescueCommand = true, fmt.Sprintf("hikoutei backup --dir %s --out FILE", dir)
	case !errors.Is(err, events.ErrStoreLocked):
		return st, err // no usable log: nothing to report as running or healthy
	}
	st.Leftovers = append(readLeftovers(dir), readAdoptions(dir)...)
	if !st.Running && readModelMissing(dir, &st) {
		st.leaseFromLog(dir)
		return st, nil
	}
	m := st
	err = readModelStatus(dir, now, hist, &m)
	if readModelDamaged(err) { // what the log tells, with the code and the next step
		st.readModelInvalid(dir, err)
		return st, nil
	}
	return m, err
}

// readModelStatus fills st with what dir's read model holds.
func readModelStatus(dir string, now time.Time, hist events.ShapeHistory, st *storeStatus) error {
	conn, done, err := readModel(dir)
	if err != nil {
		return err
	}
	defer done()
	cp, _ := strconv.ParseUint(text(conn, "SELECT value FROM hk_meta WHERE key = 'checkpoint'"), 10, 64)
	st.Checkpoint = &cp
	st.LeaseEpoch = scalar(conn, "SELECT epoch FROM hk_lease WHERE role = 'writer'")
	st.LeaseState = text(conn, "SELECT state FROM hk_lease WHERE role = 'writer'")
	st.OpenConflict = scalar(conn, "SELECT count(*) FROM hk_conflicts WHERE state = 'open'")
	st.Quarantined = scalar(conn, "SELECT count(*) FROM hk_quarantine WHERE active = 1")
	st.LastEvidence = scalar(conn, "SELECT coalesce(max(seq), 0) FROM hk_evidence")
	misdirected := "FROM hk_evidence WHERE kind = '" + string(events.TypeSyncWriteMisdirected) + "'"
	st.MisdirectedWrites = scalar(conn, "SELECT count(DISTINCT seq) "+misdirected)
	st.MisdirectedCells = scalar(conn, "SELECT count(*) "+misdirected)
	st.Divergence = text(conn, "SELECT group_concat(substr(key, 12) || ': ' || value, '; ') FROM hk_meta WHERE key LIKE 'divergence:%'")
	st.LogGaps = text(conn, "SELECT group_concat('at seq ' || substr(key, 9) || ': ' || value, '; ') FROM hk_meta WHERE key LIKE 'log_gap:%'")
	counts, err := projector.ReadOutboxCounts(conn) // kept counts (schema 8), not a count of every effect
	if err != nil {
		return err
	}
	st.Outbox = map[string]int64{}
	for s, n := range counts {
		if n != 0 {
			st.Outbox[string(s)] = n
		}
	}
	if st.SyncHealth, err = readSyncHealth(conn, now, hist); err != nil {
		return err
	}
	if st.Unwritable, err = readUnwritable(conn); err != nil {
		return err
	}
	return readReasons(conn, st)
}

// readReasons fills the reason counts of st.
func readReasons(conn *sqlite.Conn, st *storeStatus) (err error) {
	if st.reasons.outbox, err = projector.OutboxReasons(conn, reasonStates...); err != nil {
		return fmt.Errorf("read outbox reasons: %w", err)
	}
	if st.reasons.quarantine, err = projector.QuarantineReasons(conn); err != nil {
		return fmt.Errorf("read quarantine reasons: %w", err)
	}
	for state, counts := range st.reasons.outbox {
		if st.OutboxReasons == nil {
			st.OutboxReasons = map[string]map[string]int64{}
		}
		st.OutboxReasons[string(state)] = reasonMap(counts)
	}
	if len(st.reasons.quarantine) > 0 {
		st.QuarantineReasons = reasonMap(st.reasons.quarantine)
	}
	return nil
}

func reasonMap(counts []projector.ReasonCount) map[string]int64 {
	m := make(map[string]int64, len(counts))
	for _, c := range counts {
		m[reasonText(c.Reason)] = c.Count
	}
	return m
}

// reasonText names a missing reason code.
func reasonText(code string) string {
	if code == "" {
		return "no_code"
	}
	return code
}

// readSyncHealth is the sync health the read model shows; with the log's
// shape history (nil while a writer holds the log) a tab still showing an
// older layout of the entities is reported migrating.
func readSyncHealth(conn *sqlite.Conn, now time.Time, hist events.ShapeHistory) ([]syncHealthJSON, error) {
	var all []engine.SyncHealth
	var err error
	if hist != nil {
		all, err = engine.ReadSyncHealth(conn, now, hist)
	} else {
		all, err = engine.ReadSyncHealth(conn, now)
	}
	out := make([]syncHealthJSON, 0, len(all))
	for i := range all {
		out = append(out, *syncHealthOf(&all[i]))
	}
	return out, err
}

// readUnwritable lists the values shown as markers (a read model older
// than the hk_unwritable table has none).
func readUnwritable(conn *sqlite.Conn) ([]unwritableValue, error) {
	out := []unwritableValue{}
	if scalar(conn, "SELECT count(*) FROM sqlite_master WHERE name = 'hk_unwritable'") == 0 {
		return out, nil
	}
	err := sqlitex.Execute(conn, "SELECT entity, id, field, tab, reason, chars FROM hk_unwritable ORDER BY entity, id, field, tab",
		&sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
			out = append(out, unwritableValue{Entity: s.ColumnText(0), ID: s.ColumnText(1), Field: s.ColumnText(2), Tab: s.ColumnText(3),
				Reason: s.ColumnText(4), Chars: s.ColumnInt64(5)})
			return nil
		}})
	return out, err
}

// printUnwritable writes the count by reason, then one line per value
// (entity, key, field, tab, reason; never the value), at most
// maxUnwritableLines of them.
func printUnwritable(tw io.Writer, list []unwritableValue) {
	byReason := map[string]int{}
	for _, u := range list {
		byReason[u.Reason]++
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, byReason[r]))
	}
	sort.Strings(reasons)
	fmt.Fprintf(tw, "unwritable values\t%d", len(list))
	if len(reasons) > 0 {
		fmt.Fprintf(tw, " (%s)", strings.Join(reasons, ", "))
	}
	fmt.Fprintln(tw)
	for i, u := range list {
		if i == maxUnwritableLines {
			fmt.Fprintf(tw, "  …\t%d more (status --json lists all)\n", len(list)-i)
			break
		}
		size := ""
		if u.Chars > 0 {
			size = fmt.Sprintf(" (%d characters)", u.Chars)
		}
		fmt.Fprintf(tw, "  %s %s.%s\t%s on %s%s\n", shown(u.Entity), shown(u.ID), shown(u.Field), u.Reason, shown(u.Tab), size)
	}
}

// logPeekTimeout bounds how long status waits for log.db's lock when it
// reads the log itself: a writer holds it for as long as it runs, so
// status then reads the writer's answer instead of waiting.
const logPeekTimeout = 200 * time.Millisecond

// readLogHead reads the log's head and its shape history (the entities'
// declarations), when no writer holds it (events.ErrStoreLocked while one
// does).
func readLogHead(dir string) (uint64, events.ShapeHistory, error) {
	if err := engine.IsStore(dir); err != nil {
		return 0, nil, err
	}
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, OpenTimeout: logPeekTimeout})
	if err != nil {
		return 0, nil, err
	}
	defer l.Close()
	head, err := l.Head()
	if err != nil {
		return 0, nil, err
	}
	hist, err := events.ReadShapeHistory(l)
	if err != nil {
		hist = nil // the declarations cannot be read: no tab is reported migrating
	}
	return head, hist, nil
}

func printStatus(cmd *cobra.Command, st storeStatus, asJSON bool) error {
	out := cmd.OutOrStdout()
	if asJSON {
		return printJSON(out, st)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if st.LogMissing {
		fmt.Fprintf(tw, "LOG.DB MISSING	the running process still holds the log open, the only copy of the records (lost when it stops): run `%s` before stopping it\n",
			shown(st.RescueCommand))
	}
	holder := "none (store closed)"
	switch {
	case st.Running:
		holder = fmt.Sprintf("%s, operation %q", shown(st.Holder), st.Operation)
	case st.LeaseLeftover != "":
		holder = "none: no process holds the store (" + st.LeaseLeftover + ")"
	}
	head := "(held by the writer)"
	if st.LogHead != nil {
		head = strconv.FormatUint(*st.LogHead, 10)
	}
	checkpoint := "unknown (no read model to read it from)"
	if st.Checkpoint != nil && st.ReadModelCode == "" {
		checkpoint = strconv.FormatUint(*st.Checkpoint, 10)
	}
	fmt.Fprintf(tw, "holder\t%s\nlease\tepoch %d %s\nlog head\t%s\ncheckpoint\t%s\n", holder, st.LeaseEpoch, st.LeaseState, head, checkpoint)
	printLeftovers(tw, st)
	if st.ReadModelCode != "" { // nothing else to read: the read model's counts are absent
		printDisk(tw, st.Disk)
		printRunningStore(tw, st)
		return tw.Flush()
	}
	states := make([]string, 0, len(st.Outbox))
	for s := range st.Outbox {
		states = append(states, s)
	}
	sort.Strings(states)
	for _, s := range states {
		fmt.Fprintf(tw, "outbox %s%s\t%d\n", s, outboxStateNotes[s], st.Outbox[s])
	}
	fmt.Fprintf(tw, "open conflicts\t%d\nquarantined\t%d\nlast inbound evidence\tseq %d\n", st.OpenConflict, st.Quarantined, st.LastEvidence)
	printReasons(tw, st)
	printDisk(tw, st.Disk)
	printUnwritable(tw, st.Unwritable)
	if st.Divergence != "" {
		fmt.Fprintf(tw, "SYNC DIVERGED\t%s\n", shown(st.Divergence))
	}
	if st.MisdirectedWrites > 0 {
		fmt.Fprintf(tw, "misdirected writes\t%d (cells overwritten: %d; hikoutei audit names them)\n", st.MisdirectedWrites, st.MisdirectedCells)
	}
	if st.LogGaps != "" {
		fmt.Fprintf(tw, "LOG LOST RECORDS\t%s\n", st.LogGaps)
	}
	printRunningStore(tw, st)
	if err := tw.Flush(); err != nil {
		return err
	}
	printHealthSource(out, st)
	for _, h := range st.SyncHealth {
		if err := printSyncHealth(out, h); err != nil {
			return err
		}
	}
	return nil
}

// printRunningStore prints what the process holding the store answered
// about itself: retention, commits refused, segments unreachable.
func printRunningStore(tw io.Writer, st storeStatus) {
	printRetention(tw, st)
	if st.CommitsRefused != "" {
		fmt.Fprintf(tw, "COMMITS REFUSED\t%s\n", shown(st.CommitsRefused))
	}
	if st.SegmentsUnreachableCode == events.ErrSegmentMissing.Error() {
		fmt.Fprintf(tw, "SEGMENTS MISSING\t%s\n", shown(st.SegmentsUnreachable))
	} else if st.SegmentsUnreachable != "" {
		fmt.Fprintf(tw, "SEGMENTS UNREACHABLE\t%s\n", shown(st.SegmentsUnreachable))
	}
}

// printReasons prints the failed and blocked outbox entries and the
// active quarantine by reason code, and the commands that list them.
func printReasons(tw io.Writer, st storeStatus) {
	var cmds []string
	for _, state := range reasonStates {
		if counts := st.reasons.outbox[state]; len(counts) > 0 {
			fmt.Fprintf(tw, "outbox %s by reason\t%s\n", state, reasonList(counts))
			cmds = append(cmds, fmt.Sprintf("hikoutei outbox list --dir %s --state %s", shellWord(st.Dir), state))
		}
	}
	if len(st.reasons.quarantine) > 0 {
		fmt.Fprintf(tw, "quarantined by reason\t%s\n", reasonList(st.reasons.quarantine))
		cmds = append(cmds, fmt.Sprintf("hikoutei quarantine list --dir %s", shellWord(st.Dir)))
	}
	for i, c := range cmds {
		fmt.Fprintf(tw, "%s\t%s\n", map[bool]string{true: "list them with", false: ""}[i == 0], c)
	}
}

// shellWord quotes s for a POSIX shell when it needs quoting, so a
// printed command can be pasted as is.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;~#!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// reasonList renders counts as "code N, code N".
func reasonList(counts []projector.ReasonCount) string {
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = fmt.Sprintf("%s %d", reasonText(c.Reason), c.Count)
	}
	return strings.Join(parts, ", ")
}
