// Package crash is the crash and fault campaign (`make crash`): a child process
// runs a seeded mixed workload against a store synced to a Sheets emulator
// that lives in the parent (so the spreadsheet survives every kill), and
// the parent kills it with SIGKILL at seeded random instants or at a
// failpoint (internal/failpoint), restarts it, and checks after each
// restart and at the end that nothing acknowledged was lost and nothing
// was duplicated.
//
// The child is whatever the caller's Spawn returns: the re-executed test
// binary in TestCrashCampaignShort, `hikoutei-lab crash worker` for make crash.
// It reads its WorkerConfig from the environment variable WorkerEnv, runs
// on the wall clock, and prints a line for each acknowledged commit only
// after Commit returned (one write per line: atomic on a pipe).
//
// Each run: the child opens the store (sync on, dispatcher every 50 ms,
// probes after 200 ms, polls every 200 ms, a snapshot every 60 events)
// and two goroutines commit creates, updates (some of the user-owned note,
// competing with people), deletes, acknowledge_system commands and
// resolutions of open conflicts (Store.ResolveConflict, keep_system or
// use_sheet, see resolution.go) and erasures of subjects (Store.Erase of
// an Item, whose Email is personal; personal.go), under a retention policy
// that seals every few dozen records (every fifth child also compacts
// log.db before it opens the store), while
// the parent types notes on Item_Input as a person would. The parent kills
// the child with SIGKILL at a seeded instant after it opened, or — in a
// third of the runs, the failpoints taking turns — arms a failpoint
// (crash@N) via HIKOUTEI_FAILPOINTS so the child kills itself there. With
// Faults mixed the emulator's seeded fault mix (429, 503, 502 HTML,
// applied-then-503, applied-then-dropped, and now and then a hung write
// the client abandons after its 1 s timeout) is on for every other run.
//
// After each kill the parent opens the store itself without sync — that
// open takes over the dead child's lease (LeaseTTL 2 s, so it waits at
// most 2 s instead of the 15 s stale-heartbeat rule) and repairs the read
// model (one run in eight from a snapshot: read.sqlite is deleted first)
// — closes it cleanly, and checks: every acknowledged commit is in the log
// at the sequences the child was told; every acknowledged resolution is in
// the log as told (a use_sheet value still the note unless a later commit
// changed it), a stale or rejected one recorded and never applied, and no
// conflict resolved twice; the read model is at the log head
// and equals a rebuild from the log (digest over every table); lease
// epochs strictly increase (log and children); no anchor appears twice on
// any tab; every erased subject reads the marker and no file of the store
// but keys.db holds a personal value in plaintext (I37); every sequence is
// in exactly one of log.db and the sealed segments, and the chain
// verifies across them (I38, sealed.go). At the end it opens the store with sync on in-process, with
// people and faults stopped, until the outbox has nothing pending,
// processing, uncertain or failed and a full scan plus reconciliation
// change nothing twice running, and compares the sheet with canonical
// state. Excused, and reported separately: a note under an open conflict
// (the person's value stays until acknowledged, I11), and an Input row of
// a deleted entity carrying a person's note whose delete settled as a
// conflict (cleanup leaves rows with a person's data for review, I21).
package crash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/mirrorcheck"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// WorkerEnv carries the JSON WorkerConfig to a child.
const WorkerEnv = config.EnvCrashWorker

// SpreadsheetID is the emulated spreadsheet of a campaign.
const SpreadsheetID = "crash-campaign"

// Item is the campaign's entity. People may edit Note on Item_Input; the
// application also changes it, so conflicts open (and are acknowledged).
// Email is personal (sealed under the subject's key; the subject is the
// primary key): the workload erases subjects (Store.Erase) at random
// points, and the checks search every file of the store for its values.
type Item struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Count int64  `hikoutei:"count"`
	Note  string `hikoutei:"note,user"`
	Email string `hikoutei:"email,personal"`
}

// Entity is the declaration every process of a campaign opens the store with.
func Entity() hikoutei.EntityDef { return hikoutei.Entity[Item]("Item") }

// Timing of every process of a campaign. The lease TTL is short so that
// the next open after a kill -9 waits at most LeaseTTL for the dead
// holder's lease to expire (the stale-heartbeat rule would need 15 s); the
// heartbeat renews well within it.
const (
	LeaseTTL          = 2 * time.Second
	HeartbeatInterval = 250 * time.Millisecond
	AcquireWait       = 15 * time.Second
)

// WorkerConfig is what a child runs.
type WorkerConfig struct {
	Dir      string `json:"dir"`
	Endpoint string `json:"endpoint"`
	Seed     uint64 `json:"seed"`
	Run      int    `json:"run"`
	// Goroutines committing concurrently (group commit); default 2.
	Committers int `json:"committers"`
	// Compact runs Compact on the closed store before opening it (offline
	// compaction of log.db, killed there by the compact.* failpoints).
	Compact bool `json:"compact"`
	// Bucket is the folder of the fileblob bucket holding the store's
	// sealed segments ("": the store's segments folder; Config.Bucket).
	Bucket string `json:"bucket,omitempty"`
}

// Retention is the campaign's retention policy: it seals often (every
// RetentionMinBatch records beyond the newest RetentionKeep), so that a
// run seals several times and kills land inside seals.
const (
	RetentionKeep     = 120
	RetentionMinBatch = 24
)

// StoreOptions are the options of every process that opens the campaign's
// store with sync on (the child, and the parent's quiescence phase).
//
// Every run mirrors its log to NATS (the embedded server, its JetStream in
// the store directory, killed with the child): quiescence checks that the
// mirror holds every committed record (I36).
func StoreOptions(prov *gsheets.Provider, logger *slog.Logger, op string) hikoutei.Options {
	return mirrorcheck.Options(hikoutei.Options{Operation: op, LeaseTTL: LeaseTTL, HeartbeatInterval: HeartbeatInterval, AcquireWait: AcquireWait,
		SnapshotEvery: 60, Logger: logger, Retention: hikoutei.Retention{KeepRecords: RetentionKeep, MinBatch: RetentionMinBatch},
		Sync: &hikoutei.SyncOptions{SpreadsheetID: SpreadsheetID, Provider: prov, MaxBatch: 200,
			Interval: 50 * time.Millisecond, ProbeDelay: 200 * time.Millisecond, MaxProbes: 6,
			RetryBase: 50 * time.Millisecond, RetryMax: 400 * time.Millisecond, ReconcileInterval: 400 * time.Millisecond,
			PollingInterval: 200 * time.Millisecond, FullScanInterval: 600 * time.Millisecond}})
}

// NewProvider is the Sheets client of a campaign process: no pacing, quick
// retries, a short request timeout (a hung request is a timeout, I24).
func NewProvider(ctx context.Context, endpoint string, logger *slog.Logger) (*gsheets.Provider, error) {
	return gsheets.New(ctx, gsheets.Config{Endpoint: endpoint, Logger: logger,
		Pacing:         gsheets.Pacing{ReadInterval: -1, WriteInterval: -1},
		Backoff:        gsheets.Backoff{Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond, Attempts: 3},
		RequestTimeout: time.Second})
}

// Lines a child writes to stdout, each with ONE write (atomic on a pipe,
// so a kill never leaves half a line):
//
//	OPEN <epoch>                          the store is open
//	ACK <commit> <first> <last> <id> <op> Commit returned nil
//	ACKCMD <conflict_id>                  AcknowledgeSystem returned applied
//	RESOLVED … / UNAPPLIED …              ResolveConflict's outcome (resolution.go)
//	PII <id> <value>                      a personal value about to be committed (before Commit: it may be in the store unacknowledged)
//	ERASED <id>                           Erase(id) returned nil
//	ERR <message>                         the workload stopped on an error; the child waits to be killed
const (
	lineOpen   = "OPEN"
	lineAck    = "ACK"
	lineAckCmd = "ACKCMD"
	lineErr    = "ERR"
	linePII    = "PII"
	lineErased = "ERASED"
)

// RunWorker opens the store with sync on and commits a seeded mixed
// workload until ctx ends or the process is killed. It prints a line for
// every acknowledged commit only after Commit returned.
func RunWorker(ctx context.Context, cfg WorkerConfig, out io.Writer, logger *slog.Logger) error {
	if cfg.Committers <= 0 {
		cfg.Committers = 2
	}
	segs, err := openBucket(cfg.Bucket)
	if err != nil {
		return err
	}
	defer closeBucket(segs)
	if cfg.Compact {
		if _, err := hikoutei.Compact(ctx, cfg.Dir, hikoutei.CompactOptions{Segments: segs}); err != nil {
			return fmt.Errorf("compact: %w", err)
		}
	}
	prov, err := NewProvider(ctx, cfg.Endpoint, logger)
	if err != nil {
		return err
	}
	s, err := hikoutei.Open(ctx, cfg.Dir, withSegments(StoreOptions(prov, logger, "crash-worker"), segs), Entity())
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer s.Close()
	w := &worker{s: s, out: out, run: cfg.Run, erased: map[string]bool{}}
	w.say(fmt.Sprintf("%s %d\n", lineOpen, engine.Of(s).Lease().Epoch))
	items, err := hikoutei.Find[Item](ctx, s)
	if err != nil {
		return err
	}
	for _, it := range items {
		w.ids = append(w.ids, it.ID)
		if it.Email == hikoutei.Erased {
			w.erased[it.ID] = true
		}
	}
	sort.Strings(w.ids)
	var wg sync.WaitGroup
	errs := make([]error, cfg.Committers)
	for g := range cfg.Committers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[g] = w.loop(ctx, rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Run)<<8|uint64(g))), g)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// Stay alive to be killed like every other run: the supervisor
		// counts this line (e.g. a lease lost under load), it is not a crash.
		w.say(fmt.Sprintf("%s %s\n", lineErr, strings.ReplaceAll(err.Error(), "\n", " ")))
		<-ctx.Done()
		return err
	}
	return nil
}

type worker struct {
	s   *hikoutei.Store
	out io.Writer
	run int

	mu   sync.Mutex
	ids  []string // known ids (may include ones another committer removed)
	n    int
	cmds int // resolution command ids handed out

	// personal is held shared by every commit that persists an Item (it
	// may carry a personal value read before an erasure) and exclusively
	// by Erase, so no value of a subject is sealed again under a new key
	// after its erasure: the checks can then require every value printed
	// before ERASED to be unreadable for good.
	personal sync.RWMutex
	erased   map[string]bool // subjects erased or being erased (w.mu); never given a new value
	pii      int             // personal values handed out (w.mu)
}

func (w *worker) say(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	io.WriteString(w.out, line)
}

func (w *worker) pick(rng *rand.Rand) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ids) == 0 {
		return "", false
	}
	return w.ids[rng.IntN(len(w.ids))], true
}

func (w *worker) newID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	id := fmt.Sprintf("r%03d-%04d", w.run, w.n)
	w.ids = append(w.ids, id)
	return id
}

func (w *worker) forget(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, x := range w.ids {
		if x == id {
			w.ids = append(w.ids[:i], w.ids[i+1:]...)
			return
		}
	}
}

var words = []string{"alpha", "bravo", "00123", "=1+1", "+1 555", "Zürich", "naïve", "tab\there", "NaN", "SEP1", ""}

func (w *worker) loop(ctx context.Context, rng *rand.Rand, g int) error {
	for ctx.Err() == nil {
		if err := w.step(ctx, rng, g); err != nil {
			if ctx.Err() != nil || errors.Is(err, hikoutei.ErrStoreClosed) {
				return nil
			}
			return err
		}
		// Workload rate, not synchronisation: keeps each run's log small
		// enough that 200 runs stay fast.
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(rng.IntN(15)) * time.Millisecond):
		}
	}
	return nil
}

func (w *worker) step(ctx context.Context, rng *rand.Rand, g int) error {
	switch x := rng.IntN(100); {
	case x < 35:
		w.personal.RLock()
		defer w.personal.RUnlock()
		id := w.newID()
		return w.commit(ctx, "create", &Item{ID: id, Name: words[rng.IntN(len(words))], Count: rng.Int64N(1 << 40), Email: w.newPII(id)}, false)
	case x < 80:
		return w.update(ctx, rng)
	case x < 87:
		id, ok := w.pick(rng)
		if !ok {
			return nil
		}
		err := w.commit(ctx, "delete", &Item{ID: id}, true)
		if errors.Is(err, hikoutei.ErrConflictOpen) || errors.Is(err, hikoutei.ErrNotFound) {
			return nil // I15: fails closed, nothing committed
		}
		if err == nil {
			w.forget(id)
		}
		return err
	case x < 90:
		return w.acknowledge(ctx, rng)
	case x < 97:
		return w.resolve(ctx, rng, g)
	default:
		return w.erase(ctx, rng)
	}
}

// update changes one field of a known Item: its name, count, note or
// personal email (never an erased subject's).
func (w *worker) update(ctx context.Context, rng *rand.Rand) error {
	w.personal.RLock()
	defer w.personal.RUnlock()
	id, ok := w.pick(rng)
	if !ok {
		return nil
	}
	it, err := hikoutei.Get[Item](ctx, w.s, id)
	if errors.Is(err, hikoutei.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	switch rng.IntN(4) {
	case 0:
		it.Name = words[rng.IntN(len(words))]
	case 1:
		it.Count++
	case 2:
		it.Note = fmt.Sprintf("sys-%d", rng.IntN(1000)) // competes with people's edits
	default:
		if it.Email == hikoutei.Erased || w.isErased(id) {
			return nil
		}
		it.Email = w.newPII(id)
	}
	return w.commit(ctx, "update", it, false)
}

// piiPrefix starts every personal value of the workload; the checks find
// plaintext in a file by it.
const piiPrefix = "pii-"

// newPII is a fresh personal value for subject id, printed (PII) before
// the commit that carries it: a kill after the commit and before its
// acknowledgement still leaves it in the store.
func (w *worker) newPII(id string) string {
	w.mu.Lock()
	w.pii++
	v := fmt.Sprintf("%s%s-%d.%d@mail.example", piiPrefix, id, w.run, w.pii)
	w.mu.Unlock()
	w.say(fmt.Sprintf("%s %s %s\n", linePII, id, v))
	return v
}

func (w *worker) isErased(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.erased[id]
}

// erase erases a known subject (Store.Erase) while no commit that
// persists an Item is in flight, and prints ERASED once it returned.
func (w *worker) erase(ctx context.Context, rng *rand.Rand) error {
	w.personal.Lock()
	defer w.personal.Unlock()
	id, ok := w.pick(rng)
	if !ok || w.isErased(id) {
		return nil
	}
	w.mu.Lock()
	w.erased[id] = true
	w.mu.Unlock()
	if _, err := w.s.Erase(ctx, id); err != nil {
		return fmt.Errorf("erase: %w", err)
	}
	w.say(fmt.Sprintf("%s %s\n", lineErased, id))
	return nil
}

func (w *worker) commit(ctx context.Context, op string, it *Item, remove bool) error {
	u := w.s.Begin()
	var err error
	if remove {
		err = u.Remove(it)
	} else {
		err = u.Persist(it)
	}
	if err != nil {
		return err
	}
	res, err := u.Commit(ctx)
	if err != nil {
		return err
	}
	if res.Events > 0 {
		w.say(fmt.Sprintf("%s %s %d %d %s %s\n", lineAck, res.Commit, res.FirstSeq, res.LastSeq, it.ID, op))
	}
	return nil
}

func (w *worker) acknowledge(ctx context.Context, rng *rand.Rand) error {
	open, err := w.s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil || len(open) == 0 {
		return err
	}
	c := open[rng.IntN(len(open))]
	res, err := w.s.AcknowledgeSystem(ctx, hikoutei.Acknowledge{ConflictID: c.ID, CanonicalRevision: c.CanonicalRevision,
		CandidateHash: c.CandidateHash, CandidateEpoch: c.CandidateEpoch})
	switch {
	case errors.Is(err, hikoutei.ErrAckStale), errors.Is(err, hikoutei.ErrAckRejected), errors.Is(err, hikoutei.ErrConflictNotFound):
		return nil // fenced out by a concurrent change: recorded, not applied
	case err != nil:
		return err
	}
	if res.Outcome == hikoutei.AckApplied {
		w.say(fmt.Sprintf("%s %s\n", lineAckCmd, c.ID))
	}
	return nil
}

// WorkerFromEnv runs the worker described by WorkerEnv until ctx ends.
// ok is false when the variable is not set (not a child).
func WorkerFromEnv(ctx context.Context, out io.Writer, logger *slog.Logger) (ok bool, err error) {
	raw := config.CrashWorker()
	if raw == "" {
		return false, nil
	}
	var cfg WorkerConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return true, fmt.Errorf("%s: %w", WorkerEnv, err)
	}
	return true, RunWorker(ctx, cfg, out, logger)
}
