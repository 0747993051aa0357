package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/internal/progress"
)

// verifyJSON is the --json output of audit verify.
type verifyJSON struct {
	StoreID      string            `json:"store_id"`
	Head         uint64            `json:"head"`
	Hash         string            `json:"hash"`
	Records      uint64            `json:"records"`
	FirstChained uint64            `json:"first_chained"`
	Genesis      string            `json:"genesis"`
	Pinned       bool              `json:"pinned"`
	Restarts     []verifyRestartJS `json:"restarts,omitempty"`
	Segments     int               `json:"segments,omitempty"` // sealed segments walked
	Stray        []string          `json:"stray,omitempty"`    // files no seal vouches for
	// Error is the stable code of a verification that walked the whole
	// log but refused it (chain_restarted), "" when it passed.
	Error string `json:"error,omitempty"`
}

// verifyFailureJSON is what audit verify --json prints on stdout when
// verification could not run or failed before a report (chain_broken,
// chain_pin_mismatch, log_corrupt, store_locked, …): one object, so a
// script reading stdout always gets a line.
type verifyFailureJSON struct {
	Error   string `json:"error"`         // the stable code
	Message string `json:"message"`       // the error's text
	Seq     uint64 `json:"seq,omitempty"` // the record concerned, when known
	Pin     uint64 `json:"pin,omitempty"` // the pinned sequence (chain_pin_mismatch)
}

// verifyRestartJS is one salvage hole the chain restarts after.
type verifyRestartJS struct {
	Lost string `json:"lost"`
	At   uint64 `json:"at"`
}

func newAuditVerifyCmd() *cobra.Command {
	var dir, pin, segments string
	var asJSON, acceptHoles bool
	cmd := &cobra.Command{
		Use:   "verify --dir DIR [--pin SEQ:HASH] [--accept-salvage-holes] [--segments URL] [--json]",
		Short: "Verify the log's hash chain and print its head sequence and hash",
		Long: `verify walks the whole hash chain of the log, from the genesis value of the
store id to the last record, with a progress bar on stderr, and prints the
head sequence and hash, which a third party can keep. --pin SEQ:HASH
(a head printed earlier) proves that the log still extends it. The first
record that is not what the chain committed to (changed, removed,
reordered, torn) is named by its sequence (chain_broken); a pin the log
does not extend is chain_pin_mismatch. A log a salvage left with holes
has a chain that restarts after each hole, so nothing ties the records
after it to the records before: verify prints what it walked and each
hole and fails with chain_restarted, unless --accept-salvage-holes accepts
the holes (each is still printed). A head pinned after the last hole that
the log still extends (--pin) is the proof for the records after it. All
three exit 3, as does a log too damaged to open (log_corrupt). It reads log.db
read-only; while a process holds the store it verifies a consistent copy
that process writes through its administrative channel, as audit does. The
walk reads the sealed segments from DIR/segments, or from the store --segments
names (segment_missing names one that is not there; segment_store_unavailable
an object store that cannot be reached).`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			opts, err := parsePin(pin)
			if err != nil {
				return err
			}
			opts.AcceptSalvageHoles = acceptHoles
			if opts.Segments, err = openSegmentsFlag(cmd.Context(), segments, dir); err != nil {
				return err
			}
			defer closeSegments(opts.Segments)
			err = runVerify(cmd, dir, opts, asJSON)
			if asJSON && err != nil && !errors.Is(err, errDamageFound) && !errors.As(err, new(usageError)) {
				err = errors.Join(printVerifyFailure(cmd.OutOrStdout(), err), err)
			}
			return err
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&pin, "pin", "", "a head printed earlier (SEQ:HASH) the log must extend")
	cmd.Flags().BoolVar(&acceptHoles, "accept-salvage-holes", false, "accept a chain that restarts after holes a salvage left (each is printed)")
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// parsePin reads --pin SEQ:HASH.
func parsePin(s string) (hikoutei.VerifyOptions, error) {
	if s == "" {
		return hikoutei.VerifyOptions{}, nil
	}
	seq, hash, ok := strings.Cut(s, ":")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !ok || err != nil {
		return hikoutei.VerifyOptions{}, usageError{fmt.Errorf("--pin %q: want SEQ:HASH", s)}
	}
	h, err := events.ParseChainHash(hash)
	if err != nil {
		return hikoutei.VerifyOptions{}, usageError{fmt.Errorf("--pin: %w", err)}
	}
	return hikoutei.VerifyOptions{Pin: &hikoutei.ChainPin{Seq: n, Hash: hikoutei.ChainHash(h)}}, nil
}

func runVerify(cmd *cobra.Command, dir string, opts hikoutei.VerifyOptions, asJSON bool) error {
	bar := progress.New(cmd.ErrOrStderr(), 0, "verifying")
	opts.Progress = func(done, total uint64) { bar.SetMax(int64(total)); bar.Set(int64(done)) }
	rep, err := verifyStore(cmd.Context(), cmd.ErrOrStderr(), dir, opts)
	if errors.Is(err, hikoutei.ErrChainRestarted) && rep != nil {
		bar.Finish()
		return refuseHoles(cmd, rep, err, asJSON)
	}
	if err != nil {
		bar.Abandon()
		if isVerifyDamage(err) {
			if asJSON {
				if jerr := printVerifyFailure(cmd.OutOrStdout(), err); jerr != nil {
					return jerr
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "hikoutei: %v\n", err)
			return errDamageFound
		}
		return err
	}
	bar.Finish()
	if asJSON {
		return printJSON(cmd.OutOrStdout(), toVerifyJSON(rep))
	}
	printVerify(cmd.OutOrStdout(), rep)
	return nil
}

// refuseHoles prints the report of a walk that restarted after salvage
// holes, then the refusal, and exits 3.
func refuseHoles(cmd *cobra.Command, rep *hikoutei.VerifyReport, err error, asJSON bool) error {
	if asJSON {
		out := toVerifyJSON(rep)
		out.Error = hikoutei.ErrChainRestarted.Error()
		if jerr := printJSON(cmd.OutOrStdout(), out); jerr != nil {
			return jerr
		}
	} else {
		printVerify(cmd.OutOrStdout(), rep)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "hikoutei: %v (--accept-salvage-holes)\n", err)
	return errDamageFound
}

// isVerifyDamage reports whether a verification failed on the log's
// content (exit 3): a broken chain, a pin it does not extend, or a log
// too damaged to open.
func isVerifyDamage(err error) bool {
	for _, target := range []error{hikoutei.ErrChainBroken, hikoutei.ErrChainPinMismatch, hikoutei.ErrChainRestarted, hikoutei.ErrLogCorrupt, hikoutei.ErrLogRecordCorrupt} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// verifyStore verifies dir's log; while a process holds the store it
// verifies a copy that process writes through its administrative channel.
func verifyStore(ctx context.Context, stderr io.Writer, dir string, opts hikoutei.VerifyOptions) (*hikoutei.VerifyReport, error) {
	rep, err := hikoutei.VerifyDir(ctx, dir, opts)
	if !errors.Is(err, events.ErrStoreLocked) {
		return rep, err
	}
	scratch, serr := scratchDir("", "hikoutei-verify-")
	if serr != nil {
		return nil, serr
	}
	defer os.RemoveAll(scratch)
	var resp admin.BackupResponse
	handled, cerr := viaChannel(ctx, dir, admin.OpStoreBackup, admin.BackupRequest{Out: filepath.Join(scratch, events.LogFileName)}, &resp)
	switch {
	case !handled:
		return nil, err
	case cerr != nil:
		return nil, fmt.Errorf("the store is running and its copy failed: %w", cerr)
	}
	if err := adoptBackupSegments(scratch); err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "verify: the store is running: verified a copy of its log at head %d\n", resp.Head)
	opts.Segments = nil // the copy's segments are beside it
	return hikoutei.VerifyDir(ctx, scratch, opts)
}

// printVerifyFailure prints err as a verifyFailureJSON line.
func printVerifyFailure(w io.Writer, err error) error {
	out := verifyFailureJSON{Error: hikoutei.ErrorCode(err), Message: err.Error()}
	var cb *events.ChainBrokenError
	var cr *events.CorruptRecordError
	var lc *events.LogCorruptError
	var pe *events.ChainPinError
	switch {
	case errors.As(err, &cb):
		out.Seq = cb.Seq
	case errors.As(err, &cr):
		out.Seq = cr.Seq
	case errors.As(err, &pe):
		out.Pin = pe.Pin.Seq
	case errors.As(err, &lc):
		out.Seq = lc.Seq
	}
	return printJSON(w, out)
}

func toVerifyJSON(r *hikoutei.VerifyReport) verifyJSON {
	out := verifyJSON{StoreID: r.StoreID, Head: r.Head, Hash: r.HeadHash.String(), Records: r.Records,
		FirstChained: r.FirstChained, Genesis: r.Genesis.String(), Pinned: r.Pinned, Segments: r.Segments, Stray: r.Stray}
	for _, rs := range r.Restarts {
		out.Restarts = append(out.Restarts, verifyRestartJS{Lost: rs.Lost.String(), At: rs.At})
	}
	return out
}

func printVerify(w io.Writer, r *hikoutei.VerifyReport) {
	if len(r.Restarts) > 0 {
		fmt.Fprintf(w, "chain walked: %d records of store %s, every link holds between the salvage holes below\n", r.Records, r.StoreID)
	} else {
		fmt.Fprintf(w, "chain verified: %d records of store %s\n", r.Records, r.StoreID)
	}
	switch {
	case r.FirstChained == 0 && r.Records > 0:
		fmt.Fprintln(w, "no record carries a link yet (written before the chain): the head hash covers them all; pin it")
	case r.FirstChained > 1:
		fmt.Fprintf(w, "records carry links from seq %d on (the first one covers every record before it)\n", r.FirstChained)
	}
	for _, rs := range r.Restarts {
		if rs.At == 0 {
			fmt.Fprintf(w, "salvage hole: seq %s lost; no chained record follows it\n", rs.Lost)
			continue
		}
		fmt.Fprintf(w, "salvage hole: seq %s lost; the chain restarts at seq %d (no link ties what follows to what precedes)\n", rs.Lost, rs.At)
	}
	if r.Pinned {
		fmt.Fprintln(w, "the log extends the pinned head")
	}
	for _, name := range r.Stray {
		fmt.Fprintf(w, "stray segment (no seal of this store vouches for it; ignored): %s\n", name)
	}
	fmt.Fprintf(w, "head %d:%s\n", r.Head, r.HeadHash)
}

// adoptBackupSegments puts the sealed segments the store's backup copied
// beside the copy of its log (checked against the digests that copy
// vouches for) where a store keeps them, so the copy verifies through
// them: no second way to reach the live store's files.
func adoptBackupSegments(scratch string) error {
	copied := events.BackupSegmentsDir(filepath.Join(scratch, events.LogFileName))
	if _, err := os.Stat(copied); err != nil {
		return nil // nothing sealed
	}
	return os.Rename(copied, filepath.Join(scratch, events.SegmentsDir))
}
