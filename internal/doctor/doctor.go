// Package doctor inspects a store directory without modifying it and reports
// findings for `hikoutei doctor`.
package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/segstore"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// Severity of a finding.
type Severity string

// Severities: OK and Warn keep the exit code 0 (except the chain_restarted
// warning of a log with holes: Report.Holes); Fail makes it non-zero.
const (
	OK   Severity = "ok"
	Warn Severity = "warn"
	Fail Severity = "fail"
)

// Finding is one line of a doctor report.
type Finding struct {
	Check    string   `json:"check"` // "lease.toml", "log.db", …
	Severity Severity `json:"severity"`
	// Code is the stable error code of a failed check ("log_corrupt", …),
	// "" when the finding carries none.
	Code   string `json:"code,omitempty"`
	Detail string `json:"detail"`
}

// damageCodes are the codes of findings that mean stored data is damaged
// (not merely behind, locked or misconfigured): Report.Damaged.
var damageCodes = map[string]bool{
	events.ErrLogCorrupt.Error():    true,
	events.ErrCorruptRecord.Error(): true,
	events.ErrChainBroken.Error():   true,
}

// Report is the ordered list of findings for one store directory.
type Report struct {
	Dir      string    `json:"dir"`
	Findings []Finding `json:"findings"`

	progress func(Progress) // Options.Progress (nil: none)
	segments segstore.Store // Options.Segments
}

// Options tune CheckWith.
type Options struct {
	// Progress, when set, is called as each check starts and, for a check
	// that walks the log, as it advances (from the goroutine of Check).
	Progress func(Progress)
	// Segments is where the store's sealed segments live (nil: its
	// segments folder).
	Segments segstore.Store
}

// Progress says which check runs and, when it counts, how far it is.
type Progress struct {
	Step  string // what runs: "verifying log records", "walking the hash chain", …
	Done  uint64 // records done so far (0 with Total 0: the step does not count)
	Total uint64 // records to do (0: unknown)
}

// step reports progress, when someone listens.
func (r *Report) step(p Progress) {
	if r.progress != nil {
		r.progress(p)
	}
}

// Healthy reports whether no finding failed.
func (r Report) Healthy() bool {
	for _, f := range r.Findings {
		if f.Severity == Fail {
			return false
		}
	}
	return true
}

// Holes reports whether the log has holes: sequences it lost (a salvage,
// an accepted log gap) after which its hash chain restarts (a
// chain_restarted warning). The store works, but it is not healthy:
// `hikoutei doctor` exits 5 (when nothing failed), `audit verify` refuses
// the log unless holes are accepted, and a pin taken before a hole never
// vouches for the log after it.
func (r Report) Holes() bool {
	for _, f := range r.Findings {
		if f.Code == events.ErrChainRestarted.Error() {
			return true
		}
	}
	return false
}

// Damaged reports whether a failed finding says stored data is damaged
// (`hikoutei doctor` exits 3): the log must be salvaged or restored.
func (r Report) Damaged() bool {
	for _, f := range r.Findings {
		if f.Severity == Fail && damageCodes[f.Code] {
			return true
		}
	}
	return false
}

// fail adds a failed finding with the code of err (its sentinel's text).
func (r *Report) fail(check string, err error, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Check: check, Severity: Fail, Code: codeOf(err), Detail: fmt.Sprintf(format, args...)})
}

// codeOf is the stable code of err: the text of the first package sentinel
// it wraps, or "".
func codeOf(err error) string {
	for _, s := range []error{events.ErrLogCorrupt, events.ErrCorruptRecord, events.ErrChainBroken, events.ErrChainRestarted, events.ErrUnknownEventType,
		events.ErrMalformedPayload, events.ErrStoreLocked, engine.ErrLogBehindReadModel,
		engine.ErrSubscriptionCheckpoint, engine.ErrNotAStore, events.ErrStoreLogMissing, projector.ErrReadModelInvalid} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return ""
}

func (r *Report) add(check string, sev Severity, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Check: check, Severity: sev, Detail: fmt.Sprintf(format, args...)})
}

// Check inspects dir: the lease.toml shape (I22), and, when no other process
// has the store open, every log record's checksum, the hash chain, the writer lease, the
// read model (checkpoint, row digests, and every table against a rebuild
// from the log in a temporary directory) and the snapshots (manifest and
// the log's snapshot.taken events). It never writes to the store.
func Check(dir string) Report { return CheckWith(dir, Options{}) }

// CheckWith is Check, reporting its progress to opts.Progress.
func CheckWith(dir string, opts Options) Report {
	r := Report{Dir: dir, progress: opts.Progress, segments: opts.Segments}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		r.add("store", Fail, "%s is not a directory", dir)
		return r
	}
	if err := engine.IsStore(dir); errors.Is(err, engine.ErrNotAStore) {
		r.fail("log.db", err, "%v", err) // never a store: no lease.toml to speak of
		return r
	}
	leaseFile := checkLeaseFile(&r, dir)
	checkLog(&r, dir, leaseFile)
	return r
}

// checkLeaseFile validates lease.toml and reports whether it is present.
func checkLeaseFile(r *Report, dir string) bool {
	lf, err := events.ReadLeaseFile(dir)
	var lfe *events.LeaseFileError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.add("lease.toml", OK, "absent: no writer holds the store")
		return false
	case errors.As(err, &lfe):
		for _, p := range lfe.Problems {
			r.add("lease.toml", Fail, "%s (code %s)", p, events.ErrLeaseFileInvalid)
		}
		return true
	case err != nil:
		r.add("lease.toml", Fail, "unreadable: %v", err)
		return true
	}
	r.add("lease.toml", OK, "held by %s, operation %q, acquired %s", lf.Holder, lf.Operation, lf.AcquiredAt.Format("2006-01-02T15:04:05Z07:00"))
	return true
}

func checkLog(r *Report, dir string, leaseFile bool) {
	path := filepath.Join(dir, events.LogFileName)
	if err := engine.IsStore(dir); err != nil {
		r.fail("log.db", err, "%v", err)
		return
	}
	r.step(Progress{Step: "verifying log records"})
	v, err := events.VerifyLogFile(path)
	if errors.Is(err, events.ErrStoreLocked) {
		r.add("log.db", OK, "in use by a running writer: checksums not verified (run doctor after it stops)")
		return
	}
	if err != nil {
		r.fail("log.db", err, "cannot read: %v", err)
		return
	}
	reportVerification(r, v)
	l, err := events.OpenLog(path, events.Options{ReadOnly: true, Segments: r.segments})
	if err != nil {
		r.fail("log.db", err, "cannot open: %v", err)
		return
	}
	defer l.Close()
	checkChain(r, l, v)
	checkWriterLease(r, l, leaseFile)
	head, _ := l.Head()
	r.step(Progress{Step: "checking the read model"})
	if cp, ok := checkReadModel(r, dir, head, l.StoreID()); ok {
		checkReadModelData(r, dir, l, cp)
	}
	checkSubscriptions(r, dir, head)
	r.step(Progress{Step: "checking snapshots"})
	checkSnapshots(r, dir, l, head)
}

// reportVerification adds one finding per kind of damage VerifyLogFile
// found, naming every bad sequence as ranges.
func reportVerification(r *Report, v *events.Verification) {
	if v.StaleMeta != "" {
		r.add("log.db", Warn, "%s: if the store did not crash during that commit, the newest commit was lost", v.StaleMeta)
	}
	for _, p := range v.Problems {
		r.fail("log.db", p, "%v", p)
	}
	if v.MoreProblems > 0 {
		r.fail("log.db", events.ErrLogCorrupt, "%s: %d more structural problems", events.ErrLogCorrupt, v.MoreProblems)
	}
	if len(v.Corrupt) > 0 {
		r.fail("log.db", events.ErrCorruptRecord, "%s: %d records fail their checksum or shape: seq %s", events.ErrCorruptRecord, v.Corrupt.Count(), v.Corrupt)
	}
	if len(v.Undecodable) > 0 {
		r.fail("log.db", events.ErrUnknownEventType, "%s: %d intact records this build cannot decode (a newer build wrote them?): seq %s",
			events.ErrUnknownEventType, v.Undecodable.Count(), v.Undecodable)
	}
	if len(v.Missing) > 0 {
		r.fail("log.db", events.ErrLogCorrupt, "%s: %d sequences up to the head %d have no record: seq %s", events.ErrLogCorrupt, v.Missing.Count(), v.Head, v.Missing)
	}
	if len(v.SalvageLost) > 0 {
		r.add("log.db", Warn, "salvaged store: seq %s were lost in the salvage (never reused)", v.SalvageLost)
	}
	if v.Healthy() {
		r.add("log.db", OK, "%d records, all checksums valid, sequences contiguous to the head %d, bbolt check clean", v.Records, v.Head)
	} else {
		r.add("log.db", Warn, "%d records intact: `hikoutei salvage --from %s --to NEW_DIR` copies every readable record into a new store",
			v.Records, r.Dir)
	}
}

// checkReadModel compares read.sqlite's checkpoint and store id with the
// log. It returns the checkpoint, and whether the read model's data can be
// compared with the log (present, this store's, not past the head).
func checkReadModel(r *Report, dir string, head uint64, storeID string) (uint64, bool) {
	path := filepath.Join(dir, projector.FileName)
	fi, err := os.Stat(path)
	invalid := projector.ErrReadModelInvalid
	if errors.Is(err, syscall.ELOOP) {
		r.fail("read.sqlite", invalid, "%s: read.sqlite is a symbolic link that loops (%s)", invalid, rebuildHint)
		return 0, false
	}
	if err != nil {
		r.add("read.sqlite", Warn, "missing: the next open rebuilds it from the log")
		return 0, false
	}
	if !fi.Mode().IsRegular() { // never opened: a FIFO would hang the check
		r.fail("read.sqlite", invalid, "%s: read.sqlite is %s, not a file (%s)", invalid, engine.FileKind(fi.Mode()), rebuildHint)
		return 0, false
	}
	conn, done, err := engine.OpenReadModelFile(filepath.Dir(path))
	if err != nil {
		r.fail("read.sqlite", invalid, "%s: cannot open: %v (the next open rebuilds it; or %s)", invalid, err, rebuildHint)
		return 0, false
	}
	defer done()
	meta := map[string]string{}
	err = sqlitex.Execute(conn, "SELECT key, value FROM hk_meta WHERE key IN ('checkpoint', 'store_id')", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error { meta[s.ColumnText(0)] = s.ColumnText(1); return nil }})
	cp, _ := strconv.ParseUint(meta["checkpoint"], 10, 64)
	switch {
	case err != nil:
		r.fail("read.sqlite", invalid, "%s: unreadable: %v (the next open rebuilds it; or %s)", invalid, err, rebuildHint)
	case meta["store_id"] != storeID:
		r.fail("read.sqlite", invalid, "%s: built for another store (the next open rebuilds it; or %s)", invalid, rebuildHint)
	case cp > head:
		gap := &engine.LogGapError{Gap: events.LogGapDetected{ReadModelCheckpoint: cp, LogHead: head}, Dir: dir}
		r.fail("read.sqlite", gap, "checkpoint %d is past the log head %d, so the next open refuses: %v", cp, head, gap)
	case cp < head:
		r.add("read.sqlite", Warn, "checkpoint %d behind the log head %d: the next open catches up", cp, head)
		return cp, true
	default:
		r.add("read.sqlite", OK, "checkpoint %d = log head", cp)
		return cp, true
	}
	return cp, false
}

// checkSnapshots verifies every snapshot against its manifest and against
// the snapshot.taken events of the log up to head.
func checkSnapshots(r *Report, dir string, l *events.Log, head uint64) {
	if _, err := os.Stat(filepath.Join(dir, snapshots.DirName)); err != nil {
		r.add("snapshots", OK, "none")
		return
	}
	d, err := snapshots.Open(dir, 0, nil) // the folder exists: Open creates nothing

	if err != nil {
		r.add("snapshots", Fail, "%v", err)
		return
	}
	seqs, err := d.List()
	if err != nil || len(seqs) == 0 {
		r.add("snapshots", OK, "none")
		return
	}
	v, err := snapshots.ReadVouchers(l, head)
	if err != nil {
		r.add("snapshots", Fail, "cannot read the %s events: %v", events.TypeSnapshotTaken, err)
		return
	}
	for _, seq := range seqs {
		checkSnapshot(r, d, seq, l.StoreID(), v)
	}
}

func checkWriterLease(r *Report, l *events.Log, leaseFile bool) {
	lease, ok, err := l.Lease(events.DefaultRole)
	switch {
	case err != nil:
		r.add("writer lease", Fail, "unreadable: %v", err)
	case !ok:
		r.add("writer lease", OK, "never taken")
	case lease.State == events.LeaseStateHeld:
		r.add("writer lease", Warn, "epoch %d still marked held by writer %s although no process has the store open: "+
			"a run did not close cleanly; the next writer reconciles it once the takeover rule allows", lease.Epoch, lease.WriterID)
	default:
		r.add("writer lease", OK, "epoch %d %s", lease.Epoch, lease.State)
	}
	if leaseFile && err == nil && (!ok || lease.State != events.LeaseStateHeld) {
		r.add("lease.toml", Warn, "present but the writer lease is not held: leftover from a run that did not close cleanly")
	}
}

// checkSubscriptions fails every subscription checkpoint the log cannot
// have written (negative, or past the head): Subscribe refuses to run
// it (subscription_checkpoint_invalid) rather than skip events.
func checkSubscriptions(r *Report, dir string, head uint64) {
	path := filepath.Join(dir, projector.FileName)
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return // checkReadModel reported it
	}
	conn, done, err := engine.OpenReadModelFile(dir)
	if err != nil {
		return // checkReadModel reported it
	}
	defer done()
	rows, err := projector.ListSubscriptions(conn)
	if err != nil || len(rows) == 0 {
		return
	}
	bad := 0
	for _, row := range rows {
		if err := engine.CheckSubscriptionCheckpoint(row.Name, row.Stored, head); err != nil {
			r.fail("subscriptions", err, "%v", err)
			bad++
		}
	}
	if bad == 0 {
		r.add("subscriptions", OK, "%d checkpoints, none past the log head %d", len(rows), head)
	}
}
