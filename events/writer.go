package events

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// LogFileName is the bbolt file inside a store directory.
const LogFileName = "log.db"

// DefaultAcquireWait is how long OpenWriter waits for a dead writer's lease
// to become takeable (at most StaleHeartbeatAfter after its last heartbeat).
const DefaultAcquireWait = 20 * time.Second

// WriterOptions configures OpenWriter. Zero values take the defaults.
type WriterOptions struct {
	Log       Options       // clock, open timeout, upcasters, …
	Role      string        // default DefaultRole
	Operation string        // recorded in lease.toml and lease events; default "open"
	LeaseTTL  time.Duration // default DefaultLeaseTTL
	// HeartbeatInterval is the renew-only heartbeat cadence (I03); default
	// HeartbeatInterval. Negative disables the background heartbeat.
	HeartbeatInterval time.Duration
	// AcquireWait bounds the wait for a takeover the rule does not allow yet;
	// default DefaultAcquireWait, negative = fail at once with *LeaseHeldError.
	AcquireWait time.Duration
	// BeforeLease, if set, runs after log.db is open (and file-locked)
	// and before the lease is acquired, i.e. before anything is appended;
	// an error aborts the open with nothing written to the log.
	BeforeLease func(*Log) error
	// OnLeaseLost, if set, is called once when the heartbeat finds the lease
	// taken over or expired (the writer is displaced; appends are fenced).
	OnLeaseLost func(error)
	// OnLogFileReplaced, if set, is called once when the heartbeat finds
	// that the directory's log.db is no longer the file open (replaced,
	// renamed away or removed: Log.CheckFile); appends fail from then on
	// with ErrLogFileReplaced.
	OnLogFileReplaced func(error)
	// ElectedEpoch, when non-zero, says the lease across hosts (replicated
	// mode) elected this writer at that epoch: the local lease is taken
	// as AcquireRequest.Elected with it as MinEpoch.
	ElectedEpoch uint64
}

// Writer is a store directory opened for writing: log.db, the held writer
// lease, lease.toml and the background heartbeat. Every Append is fenced by
// the lease (I01).
type Writer struct {
	dir   string
	log   *Log
	opts  WriterOptions
	lease atomic.Pointer[Lease]
	stop  chan struct{}
	done  sync.WaitGroup
	lost  atomic.Bool
	once  sync.Once
	// released is set once the lease was given up (Release or Close).
	released atomic.Bool
	// replaced is set once the heartbeat reported the log file replaced.
	replaced atomic.Bool
}

// OpenWriter opens the store directory dir for writing, creating a new
// store (mode 0700 dir / 0600 files) only in a missing or empty directory:
//  0. a directory that holds anything but no usable log.db fails with
//     *StoreLogMissingError and is left untouched (never a new store over
//     a damaged one);
//  1. opens log.db, failing within opts.Log.OpenTimeout (default 1 s) with
//     *StoreLockedError naming the holder from lease.toml if another process
//     has it open;
//  2. reads a leftover lease.toml (a run that did not close cleanly);
//  3. acquires the writer lease (I02), waiting up to AcquireWait on the log
//     clock for a dead holder's lease to become takeable, and records the
//     leftover's reconciliation in the same transaction (I22);
//  4. writes lease.toml atomically and starts the heartbeat.
//
// opts.BeforeLease runs between 1 and 2. Errors: *StoreLogMissingError,
// *StoreLockedError, *LeaseHeldError, BeforeLease's, I/O errors.
func OpenWriter(dir string, opts WriterOptions) (*Writer, error) {
	opts = opts.withDefaults()
	if err := prepareStoreDir(dir); err != nil {
		return nil, err
	}
	log, err := OpenLog(filepath.Join(dir, LogFileName), opts.Log)
	if err != nil {
		return nil, DescribeLocked(dir, err)
	}
	w := &Writer{dir: dir, log: log, opts: opts, stop: make(chan struct{})}
	if err := w.beforeLease(); err != nil {
		log.Close()
		return nil, err
	}
	if err := w.takeLease(); err != nil {
		log.Close()
		return nil, err
	}
	removeTempLeaseFiles(dir)
	removeTempSegments(log)
	w.startHeartbeat()
	return w, nil
}

func (w *Writer) beforeLease() error {
	if w.opts.BeforeLease == nil {
		return nil
	}
	return w.opts.BeforeLease(w.log)
}

// removeTempLeaseFiles deletes temp files a crash inside writeLeaseFile
// left (".lease.toml.tmp-*"); this writer holds the store, so none is live.
func removeTempLeaseFiles(dir string) {
	matches, _ := filepath.Glob(filepath.Join(dir, "."+LeaseFileName+".tmp-*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// removeTempSegments deletes the temporary files of segment writes a
// crash interrupted (segstore.Dir.Put's NAME.seg.zst.tmp) from the log's
// segments folder; this writer holds the store, so no seal is in flight.
// An object store has no such files (an upload is whole or absent).
func removeTempSegments(l *Log) {
	d, ok := l.segs.(*segstore.Dir)
	if !ok {
		return
	}
	matches, _ := filepath.Glob(filepath.Join(d.Path(), "*"+segmentSuffix+".tmp"))
	for _, m := range matches {
		os.Remove(m)
	}
}

func (o WriterOptions) withDefaults() WriterOptions {
	if o.Role == "" {
		o.Role = DefaultRole
	}
	if o.Operation == "" {
		o.Operation = "open"
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = HeartbeatInterval
	}
	if o.AcquireWait == 0 {
		o.AcquireWait = DefaultAcquireWait
	}
	if o.Log.Clock == nil {
		o.Log.Clock = SystemClock{}
	}
	return o
}

// DescribeLocked fills a *StoreLockedError with the holder and operation
// named in dir's lease.toml; other errors pass through unchanged.
func DescribeLocked(dir string, err error) error {
	var sl *StoreLockedError
	if !errors.As(err, &sl) {
		return err
	}
	sl.Dir = dir
	lf, ferr := ReadLeaseFile(dir)
	switch {
	case ferr == nil:
		sl.Holder, sl.Operation = lf.Holder.String(), lf.Operation
	case errors.Is(ferr, fs.ErrNotExist):
		sl.Holder = "another process (no lease.toml: it is opening or closing)"
	default:
		sl.Holder = "another process (lease.toml unreadable: " + ferr.Error() + ")"
	}
	return sl
}

func (w *Writer) takeLease() error {
	leftover, err := readLeftover(w.dir)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	req := AcquireRequest{Role: w.opts.Role, WriterID: NewWriterID(), Host: host,
		PID: int64(os.Getpid()), Operation: w.opts.Operation, TTL: w.opts.LeaseTTL, Leftover: leftover,
		Elected: w.opts.ElectedEpoch > 0, MinEpoch: w.opts.ElectedEpoch}
	lease, err := w.acquireWaiting(req)
	if err != nil {
		return err
	}
	w.lease.Store(&lease)
	lf := LeaseFile{Schema: LeaseFileSchema, Operation: req.Operation, AcquiredAt: w.log.clock.Now(),
		Holder: LeaseHolder{Host: host, PID: req.PID, WriterID: req.WriterID}}
	if err := writeLeaseFile(w.dir, lf); err != nil {
		_ = w.log.ReleaseLease(lease.Fence())
		return fmt.Errorf("write lease.toml: %w", err)
	}
	return nil
}

// readLeftover returns the lease.toml a previous run left, if any. A
// malformed leftover is moved aside (never deleted) and reconciled as an
// unknown holder.
func readLeftover(dir string) (*LeaseFile, error) {
	lf, err := ReadLeaseFile(dir)
	switch {
	case err == nil:
		return &lf, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, ErrLeaseFileInvalid):
		aside := filepath.Join(dir, fmt.Sprintf("%s.invalid-%d", LeaseFileName, time.Now().UnixNano()))
		if rerr := os.Rename(filepath.Join(dir, LeaseFileName), aside); rerr != nil {
			return nil, rerr
		}
		return &LeaseFile{Schema: LeaseFileSchema, Operation: "unknown (invalid lease.toml moved to " + filepath.Base(aside) + ")"}, nil
	}
	return nil, err
}

// acquireWaiting retries AcquireLease until it succeeds, the holder's
// TakeoverAt passes the AcquireWait deadline, or a non-lease error occurs.
func (w *Writer) acquireWaiting(req AcquireRequest) (Lease, error) {
	clock := w.log.clock
	deadline := clock.Now().Add(w.opts.AcquireWait)
	for {
		lease, err := w.log.AcquireLease(req)
		var held *LeaseHeldError
		if !errors.As(err, &held) || w.opts.AcquireWait < 0 {
			return lease, err
		}
		cur, _, lerr := w.log.Lease(req.Role)
		if lerr != nil {
			return Lease{}, lerr
		}
		at := cur.TakeoverAt()
		if at.After(deadline) {
			return Lease{}, err
		}
		<-clock.After(at.Sub(clock.Now()))
	}
}

// Dir is the store directory.
func (w *Writer) Dir() string { return w.dir }

// Log is the underlying log, for reads. Appends go through Writer.Append.
func (w *Writer) Log() *Log { return w.log }

// Lease is the lease as of the last acquisition or renewal.
func (w *Writer) Lease() Lease { return *w.lease.Load() }

// Fence is the writer's current fence.
func (w *Writer) Fence() Fence { return w.Lease().Fence() }

// Lost reports whether the heartbeat found the lease gone (displaced writer).
func (w *Writer) Lost() bool { return w.lost.Load() }

// Append appends units fenced by this writer's lease. See Log.Append.
func (w *Writer) Append(units ...Unit) ([]UnitResult, error) {
	return w.log.Append(w.Fence(), units...)
}

// AppendAsync appends units fenced by this writer's lease, committing on
// another goroutine. See Log.AppendAsync.
func (w *Writer) AppendAsync(units ...Unit) ([]UnitResult, func() error, error) {
	return w.log.AppendAsync(w.Fence(), units...)
}

// Renew extends this writer's own live lease now (what the heartbeat does).
// Errors as Log.RenewLease; on a fencing error the writer is marked lost.
func (w *Writer) Renew() error {
	l, err := w.log.RenewLease(w.Fence(), w.opts.LeaseTTL)
	if err != nil {
		if errors.Is(err, ErrStaleWriterFence) || errors.Is(err, ErrLeaseExpired) {
			w.markLost(err)
		}
		return err
	}
	w.lease.Store(&l)
	return nil
}

// RenewIfDue renews the lease when less than half its TTL remains: the
// renewal at each pass, so a busy writer never depends on the
// background heartbeat alone. Errors as Renew.
func (w *Writer) RenewIfDue() error {
	if w.Lease().LeaseUntil.Sub(w.log.clock.Now()) >= w.opts.LeaseTTL/2 {
		return nil
	}
	return w.Renew()
}

func (w *Writer) markLost(err error) {
	if !w.lost.Swap(true) && w.opts.OnLeaseLost != nil {
		w.opts.OnLeaseLost(err)
	}
}

func (w *Writer) startHeartbeat() {
	if w.opts.HeartbeatInterval < 0 {
		return
	}
	w.done.Add(1)
	go w.heartbeat()
}

// heartbeat renews on the log clock every HeartbeatInterval until Close or
// until the lease is lost. It only ever renews (I03).
func (w *Writer) heartbeat() {
	defer w.done.Done()
	for {
		select {
		case <-w.stop:
			return
		case <-w.log.clock.After(w.opts.HeartbeatInterval):
		}
		w.checkFile()
		if err := w.Renew(); err != nil && w.Lost() {
			return
		}
	}
}

// checkFile reports, once, a log.db replaced under the writer.
func (w *Writer) checkFile() {
	if err := w.log.CheckFile(); err != nil && !w.replaced.Swap(true) && w.opts.OnLogFileReplaced != nil {
		w.opts.OnLogFileReplaced(err)
	}
}

// Close stops the heartbeat, releases the lease (recording lease.released),
// removes lease.toml and closes log.db, so another process can open the
// store at once. If the lease was lost, lease.toml is left for the new
// holder's reconciliation. Errors: the first failure; Close is idempotent.
func (w *Writer) Close() error {
	var err error
	w.once.Do(func() {
		close(w.stop)
		w.done.Wait()
		err = w.Release()
		if cerr := w.log.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

// Release gives up the lease (recording lease.released) and removes
// lease.toml, keeping log.db open for reads; Close then only closes the
// file. Idempotent.
func (w *Writer) Release() error {
	if w.released.Swap(true) {
		return nil
	}
	return w.release()
}

func (w *Writer) release() error {
	if err := w.log.ReleaseLease(w.Fence()); err != nil {
		if errors.Is(err, ErrStaleWriterFence) {
			return nil // displaced: the lease and its file belong to the new holder now
		}
		return err
	}
	return removeLeaseFile(w.dir)
}
