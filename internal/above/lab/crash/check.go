package crash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/mirrorcheck"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/sheetcheck"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

type ack struct {
	commit      string
	first, last uint64
	id, op      string
}

// checker holds what the children acknowledged and what the log showed.
type checker struct {
	dir    string
	bucket string // the bucket's folder ("": segments in the store's folder)
	c      *campaign

	mu      sync.Mutex
	acks    []ack    // not yet verified
	ackCmds []string // conflict ids, not yet verified
	epochs  []uint64 // OPEN epochs of the children, in order
	// from the log, read incrementally
	logSeq    uint64
	commits   map[string]events.Event // commit id → its first event
	applied   map[string]bool         // conflict ids with command.acknowledge_system.applied
	lastEpoch uint64                  // newest lease epoch seen in the log
	ledger    resolutionLedger        // ResolveConflict: reported and logged
	personal  *personalLedger         // personal values and erasures
	segments  int                     // sealed segments at the last check
}

func newChecker(dir string, c *campaign) *checker {
	return &checker{dir: dir, c: c, commits: map[string]events.Event{}, applied: map[string]bool{}, ledger: newResolutionLedger(),
		personal: newPersonalLedger()}
}

func (k *checker) opened(epoch uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := len(k.epochs); n > 0 && epoch <= k.epochs[n-1] {
		k.c.problem(&k.c.res.Mismatches, "lease epoch %d of a child is not above the previous child's %d", epoch, k.epochs[n-1])
	}
	k.epochs = append(k.epochs, epoch)
}

func (k *checker) ack(a ack) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.acks = append(k.acks, a)
	k.c.res.Acked++
}

func (k *checker) ackCmd(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ackCmds = append(k.ackCmds, id)
	k.c.res.Acked++
}

// afterRun is the check after each kill. It opens the store in this
// process without sync (waiting at most LeaseTTL for the dead child's
// lease: the takeover path), which repairs the read model from its
// checkpoint — or, when dropReadModel, from the newest snapshot plus the
// log tail — then closes it cleanly and checks:
//   - every acknowledged commit is in the log, and the read model's
//     checkpoint is at the log head;
//   - every acknowledged resolution is in the log as reported, a use_sheet
//     value is the note the read model shows unless a later commit
//     changed it, a stale or rejected one is recorded and never applied,
//     and no conflict is resolved twice (verifyResolutions);
//   - the read model equals a rebuild from the log (digest over every table),
//     and each one's kept outbox counts by state equal a count of its outbox;
//   - lease epochs in the log strictly increase;
//   - no anchor appears twice on a tab of the spreadsheet;
//   - every erased subject reads the marker (checkPersonal, I37);
//   - every sequence is in exactly one of log.db and the sealed segments
//     and the chain verifies across them (checkSealed, I38);
//   - no file of the store but keys.db holds a personal value in
//     plaintext (scanPlaintext).
func (k *checker) afterRun(ctx context.Context, run int, dropReadModel bool) error {
	if dropReadModel {
		if err := removeReadModel(k.dir); err != nil {
			return err
		}
	}
	segs, err := openBucket(k.bucket)
	if err != nil {
		return err
	}
	defer closeBucket(segs)
	s, err := hikoutei.Open(ctx, k.dir, withSegments(hikoutei.Options{Operation: "crash-check", LeaseTTL: LeaseTTL, HeartbeatInterval: HeartbeatInterval,
		AcquireWait: AcquireWait, Logger: k.c.cfg.Logger}, segs), Entity())
	if err != nil {
		return fmt.Errorf("reopen after the kill: %w", err)
	}
	head, herr := engine.Of(s).Log().Head()
	cp := engine.Of(s).Checkpoint()
	if herr != nil {
		s.Close()
		return herr
	}
	if cp != head {
		k.c.problem(&k.c.res.Mismatches, "run %d: read model checkpoint %d after open, log head %d", run, cp, head)
	}
	notes, nerr := itemNotes(ctx, s)
	perr := k.checkPersonal(ctx, s, run)
	if err := errors.Join(nerr, perr, s.Close()); err != nil {
		return fmt.Errorf("close after the check: %w", err)
	}
	if err := k.readLog(run); err != nil {
		return err
	}
	k.verifyAcks(run)
	k.verifyResolutions(run, notes)
	if err := k.compareRebuild(run); err != nil {
		return err
	}
	k.countDuplicates(run)
	return k.checkStoreFiles(ctx, run)
}

// checkStoreFiles checks the closed store's files: I38 (every event in
// exactly one place, the chain across segments and log.db) and that no
// file holds a personal value in plaintext (I37 for erased subjects).
func (k *checker) checkStoreFiles(ctx context.Context, run int) error {
	n, err := k.checkSealed(ctx, run)
	if err != nil {
		return fmt.Errorf("sealed segments: %w", err)
	}
	k.segments = n
	if err := k.scanPlaintext(run); err != nil {
		return fmt.Errorf("plaintext search: %w", err)
	}
	return nil
}

// itemNotes is every live Item's note as the read model shows it.
func itemNotes(ctx context.Context, s *hikoutei.Store) (map[string]string, error) {
	items, err := hikoutei.Find[Item](ctx, s)
	if err != nil {
		return nil, err
	}
	notes := make(map[string]string, len(items))
	for _, it := range items {
		notes[it.ID] = it.Note
	}
	return notes, nil
}

// readLog reads the log's new events (read-only; no writer is open),
// through the campaign's segment store.
func (k *checker) readLog(run int) error {
	segs, err := openBucket(k.bucket)
	if err != nil {
		return err
	}
	defer closeBucket(segs)
	l, err := events.OpenLog(filepath.Join(k.dir, events.LogFileName), events.Options{ReadOnly: true, Segments: segs})
	if err != nil {
		return err
	}
	defer l.Close()
	return l.ReadFrom(k.logSeq+1, func(e events.Event) error {
		k.logSeq = e.Seq
		if _, ok := k.commits[e.Commit]; !ok {
			k.commits[e.Commit] = e
		}
		switch p := e.Payload.(type) {
		case events.LeaseAcquired:
			k.leaseEpoch(e, p.Epoch)
		case events.LeaseTakenOver:
			k.leaseEpoch(e, p.Epoch)
		case events.AckApplied:
			k.applied[p.ConflictID] = true
		}
		k.logEvent(run, e)
		return nil
	})
}

// leaseEpoch checks that every lease grant raises the epoch (I02).
func (k *checker) leaseEpoch(e events.Event, epoch uint64) {
	if epoch <= k.lastEpoch {
		k.c.problem(&k.c.res.Mismatches, "lease epoch %d at seq %d does not exceed %d", epoch, e.Seq, k.lastEpoch)
	}
	k.lastEpoch = epoch
}

// verifyAcks: every acknowledged commit is in the log with the sequences
// and the entity stream the child was told.
func (k *checker) verifyAcks(run int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, a := range k.acks {
		e, ok := k.commits[a.commit]
		if !ok || e.Seq != a.first || e.Stream != events.EntityStream("Item", a.id) {
			k.c.problem(&k.c.res.Lost, "run %d: acknowledged %s of %s (commit %s, seq %d..%d) is not in the log (found %v at %d)",
				run, a.op, a.id, a.commit, a.first, a.last, ok, e.Seq)
		}
	}
	for _, id := range k.ackCmds {
		if !k.applied[id] {
			k.c.problem(&k.c.res.Lost, "run %d: acknowledged acknowledge_system of %s is not in the log", run, id)
		}
	}
	k.acks, k.ackCmds = k.acks[:0], k.ackCmds[:0]
}

// compareRebuild replays the whole log into a fresh read model and
// compares its digest with the live one (I23).
func (k *checker) compareRebuild(run int) error {
	tmp, err := os.MkdirTemp("", "hikoutei-crash-rebuild-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	target := filepath.Join(tmp, "rebuild.sqlite")
	segs, err := openBucket(k.bucket)
	if err != nil {
		return err
	}
	defer closeBucket(segs)
	if _, err := hikoutei.Replay(context.Background(), k.dir, target, hikoutei.ReplayOptions{Segments: segs}, Entity()); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	live, err := projector.Digest(filepath.Join(k.dir, hikoutei.ReadModelFile))
	if err != nil {
		return err
	}
	rebuilt, err := projector.Digest(target)
	if err != nil {
		return err
	}
	if live != rebuilt {
		k.c.problem(&k.c.res.Mismatches, "run %d: read model %s differs from its rebuild %s", run, live, rebuilt)
	}
	for _, path := range []string{filepath.Join(k.dir, hikoutei.ReadModelFile), target} {
		differ, err := keptCounts(path)
		if err != nil {
			return err
		}
		if differ != "" {
			k.c.problem(&k.c.res.Mismatches, "run %d: the outbox's counts by state of %s: %s", run, filepath.Base(path), differ)
		}
	}
	return nil
}

// countDuplicates counts, on every tab with an anchor column, rows whose
// anchor another row of the tab already has.
func (k *checker) countDuplicates(run int) {
	p := k.c.emu.Person(SpreadsheetID)
	for _, tab := range []string{"Item_System", "Item_Input", layout.ConflictsTab, layout.ReceiptsTab} {
		rows, err := p.Displayed(tab)
		if err != nil {
			continue
		}
		for _, a := range sheetcheck.DuplicateAnchors(rows, layout.AnchorHeader, layout.ConflictID) {
			k.c.problem(&k.c.res.Duplicates, "run %d: %s shows anchor %q twice", run, tab, a)
		}
	}
}

// quiesce opens the store with sync on in this process, with the fault mix
// and people stopped, and runs until the outbox has nothing unsettled and a
// full scan of the Input tabs changes nothing; then it checks the sheet
// against canonical state.
func (c *campaign) quiesce(ctx context.Context) error {
	c.emu.ClearFaults()
	prov, err := NewProvider(ctx, c.url, c.cfg.Logger)
	if err != nil {
		return err
	}
	segs, err := openBucket(c.checks.bucket)
	if err != nil {
		return err
	}
	defer closeBucket(segs)
	s, err := hikoutei.Open(ctx, c.cfg.Dir, withSegments(StoreOptions(prov, c.cfg.Logger, "crash-quiesce"), segs), Entity())
	if err != nil {
		return err
	}
	defer s.Close()
	eng := engine.Of(s)
	deadline := time.Now().Add(c.cfg.QuiesceTimeout)
	var last uint64
	for stable := 0; stable < 2; {
		if time.Now().After(deadline) {
			counts, _ := eng.OutboxCounts()
			c.problem(&c.res.Mismatches, "no quiescence within %v: outbox %v, health %+v", c.cfg.QuiesceTimeout, counts, s.Health())
			break
		}
		if err := waitSettled(ctx, eng, deadline); err != nil {
			return err
		}
		disp, poller, _ := eng.Workers()
		if poller != nil {
			if _, err := poller.FullScan(ctx); err != nil {
				fmt.Fprintf(c.out, "crash: quiescence full scan: %v\n", err)
				continue
			}
		}
		if disp == nil {
			continue
		}
		if _, err := disp.Reconcile(ctx); err != nil {
			fmt.Fprintf(c.out, "crash: quiescence reconcile: %v\n", err)
			continue
		}
		head, err := eng.Log().Head()
		if err != nil {
			return err
		}
		if head == last {
			stable++
		} else {
			stable, last = 0, head
		}
	}
	counts, err := eng.OutboxCounts()
	if err != nil {
		return err
	}
	if n := unsettled(counts); n != 0 {
		c.problem(&c.res.Mismatches, "after quiescence %d effects are unsettled: %v", n, counts)
	}
	c.checks.countDuplicates(-1)
	if err := c.compareSheet(ctx, s, prov); err != nil {
		return err
	}
	c.checkMirror(ctx, s)
	return nil
}

// checkMirror checks, after quiescence, that the NATS event mirror holds
// every committed record up to the log's head and verifies (I36).
func (c *campaign) checkMirror(ctx context.Context, s *hikoutei.Store) {
	res, err := mirrorcheck.Check(ctx, s, 30*time.Second)
	c.res.Mirror = res
	if err != nil {
		c.problem(&c.res.Mismatches, "mirror after quiescence: %v", err)
		return
	}
	fmt.Fprintf(c.out, "crash: mirror: %d records verified up to the log head %d (%s)\n", res.Records, res.LogHead, res.Took.Round(time.Millisecond))
}

func unsettled(c map[aggregates.EffectState]int64) int64 {
	n := int64(0)
	for _, s := range aggregates.Unsettled() {
		n += c[s]
	}
	return n
}

// waitSettled waits (bounded) until the provisioned outbox has nothing
// pending, processing, uncertain or failed.
func waitSettled(ctx context.Context, eng *engine.Engine, deadline time.Time) error {
	for {
		if disp, _, _ := eng.Workers(); disp != nil {
			c, err := eng.OutboxCounts()
			if err != nil {
				return err
			}
			if unsettled(c) == 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return nil // the caller reports it
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond): // poll a condition, bounded by deadline
		}
	}
}

// compareSheet: every entity has exactly one System row showing its
// canonical values and one Input row showing its key and note, except a
// note under an open conflict (the person's value stays until someone
// acknowledges: documented); no row shows an entity that does not exist.
func (c *campaign) compareSheet(ctx context.Context, s *hikoutei.Store, prov *gsheets.Provider) error {
	_, _, wb := engine.Of(s).Workers()
	snaps, err := prov.Snapshot(ctx, wb, "Item_System", "Item_Input")
	if err != nil {
		return err
	}
	items, err := hikoutei.Find[Item](ctx, s)
	if err != nil {
		return err
	}
	open, err := s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil {
		return err
	}
	conflicted := map[string]bool{}
	for _, cf := range open {
		conflicted[cf.EntityID+"/"+cf.Field] = true
	}
	c.res.OpenConflicts = len(open)
	want := map[string]map[string]any{}
	for _, it := range items {
		// The sheet shows a personal field's value opened, or the
		// erased marker, as typed reads do (docs/erasure.md).
		want[it.ID] = map[string]any{"id": it.ID, "name": it.Name, "count": it.Count, "note": it.Note, "email": it.Email}
	}
	for _, tab := range []string{"Item_System", "Item_Input"} {
		spec, _ := wb.Schema().Tab(tab)
		excused := func(id string, missing bool) bool { return !missing && tab == "Item_Input" && conflicted[id+"/note"] }
		rep, err := sheetcheck.Tab(snaps[tab], spec, want, excused)
		if err != nil {
			return err
		}
		if err := c.reportTab(s, tab, snaps[tab], rep); err != nil {
			return err
		}
	}
	c.res.Litter = Litter(c.cfg.Dir)
	segs, err := s.Segments()
	if err != nil {
		return err
	}
	c.res.Litter = append(c.res.Litter, c.checks.straySegments(ctx, segs)...)
	fmt.Fprintf(c.out, "crash: sealed: %d segments vouched for by the log; %s\n", len(segs), c.checks.personalNote())
	fmt.Fprintf(c.out, "crash: quiescent: %d items, %d open conflicts, %d orphan Input rows with a person's note left for review, litter %v, failpoints fired %v\n",
		len(items), len(open), c.res.Review, c.res.Litter, c.res.Failpoints)
	return nil
}

// reportTab turns one tab's differences into problems, except an Input
// row of a deleted entity carrying a person's note whose delete settled as
// a conflict (left for review, I21).
func (c *campaign) reportTab(s *hikoutei.Store, tab string, snap *sheetsio.TabSnapshot, rep sheetcheck.Report) error {
	for _, id := range rep.Missing {
		c.problem(&c.res.Mismatches, "%s has no row for %s", tab, id)
	}
	for _, id := range rep.Duplicated {
		c.problem(&c.res.Duplicates, "%s has %d rows for %s", tab, len(snap.Find(id)), id)
	}
	for _, id := range rep.Drifted {
		c.problem(&c.res.Mismatches, "%s row %s does not show its canonical values", tab, id)
	}
	for _, id := range rep.Orphans {
		if tab == "Item_Input" && carriesPersonData(snap.Find(id)[0]) {
			op, state, err := sheetcheck.LastEffect(s.ReadModelPath(), "", tab, id)
			if err != nil {
				return err
			}
			if op == "delete" && state == "conflict" {
				c.res.Review++
				continue
			}
		}
		c.problem(&c.res.Mismatches, "%s shows %q, which is not a live entity", tab, id)
	}
	return nil
}

// carriesPersonData reports an Input row whose note a person typed.
func carriesPersonData(r sheetsio.Row) bool {
	for _, v := range r.Cells {
		if s, ok := v.(string); ok && strings.HasPrefix(s, personPrefix) {
			return true
		}
	}
	return false
}

// Litter lists files a crash left behind that nothing will ever remove:
// temporary lease.toml files (a kill inside events.writeFileAtomic) and
// snapshot files without a manifest (a kill inside snapshots.Dir.Take).
// They are harmless to correctness (a snapshot without a manifest is
// ignored) and reported, not counted as mismatches.
func Litter(dir string) []string {
	var out []string
	if es, err := os.ReadDir(dir); err == nil {
		for _, e := range es {
			if strings.HasPrefix(e.Name(), ".lease.toml.tmp-") {
				out = append(out, e.Name())
			}
		}
	}
	snap := filepath.Join(dir, "snapshots")
	es, err := os.ReadDir(snap)
	if err != nil {
		return out
	}
	manifests := map[string]bool{}
	for _, e := range es {
		if base, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			manifests[base] = true
		}
	}
	for _, e := range es {
		base, ok := strings.CutSuffix(e.Name(), ".sqlite")
		switch {
		case ok && !manifests[base], strings.HasSuffix(e.Name(), ".tmp"):
			out = append(out, filepath.Join("snapshots", e.Name()))
		}
	}
	return out
}
