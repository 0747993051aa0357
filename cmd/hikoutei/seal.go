package main

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

func newSealCmd() *cobra.Command {
	var dir, segments string
	var below, keep, minBatch uint64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "seal --dir DIR (--below SEQ | --keep N [--min-batch M]) [--json]",
		Short: "Move a closed store's older records out of log.db into a sealed segment file",
		Long: `seal moves the records of a closed store with a sequence below SEQ (or all
but the newest N; --keep 0 keeps none back) out of DIR/log.db into one
compressed, read-only segment file in DIR/segments (or the object store
--segments names), named by its first and last sequences and chain values. The file is written, synced (an
object: uploaded) and read back before the log vouches for it with a
` + string(events.TypeSegmentSealed) + ` event, committed in the transaction that removes the records;
a crash at any step loses nothing. Reads of old events (replay, audit, the
audit verify walk from the first record) read through the segments; opening
the store never does. Records the read model has not applied, and the ones of
the streams a store reads when it opens, stay in log.db. It needs the store
closed (it takes the writer lease) and uses no network unless --segments names
an object store. With --keep, it seals only when at least --min-batch records
may go (default the background seal's batch, also for --min-batch 0); with
fewer, as when it runs again soon after a seal, it seals nothing and says so,
so that repeated runs write no segments of a few records; --min-batch 1 seals
whatever may go.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			opts, err := sealOptions(cmd.Flags(), below, keep, minBatch)
			if err != nil {
				return err
			}
			segURL, err := segmentsURL(segments)
			if err != nil {
				return err
			}
			s, err := hikoutei.OpenDeclared(cmd.Context(), dir, hikoutei.Options{Operation: "seal", NoAdmin: true, Segments: segURL})
			if err != nil {
				return err
			}
			rep, err := s.Seal(cmd.Context(), opts)
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			return printSeal(cmd, rep, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().Uint64Var(&below, "below", 0, "seal the records with a sequence below SEQ")
	cmd.Flags().Uint64Var(&keep, "keep", 0, "seal all records but the newest N (0: every record it may)")
	cmd.Flags().Uint64Var(&minBatch, "min-batch", hikoutei.DefaultRetentionMinBatch,
		fmt.Sprintf("with --keep: seal only when at least M records may go (0: %d; 1: any number)", hikoutei.DefaultRetentionMinBatch))
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// sealOptions is what --below and --keep ask of the seal: exactly one
// of them. --keep 0 keeps no record back: it seals every record the
// store lets go (the library's Below past the head); --below 0 names no
// record and is refused. --keep seals at least --min-batch records (or
// nothing; 0 is the default batch, as in the library); --below names its
// point and takes no minimum (a MinBatch of 1).
func sealOptions(flags *pflag.FlagSet, below, keep, minBatch uint64) (hikoutei.SealOptions, error) {
	hasBelow, hasKeep := flags.Changed("below"), flags.Changed("keep")
	switch {
	case hasBelow == hasKeep:
		return hikoutei.SealOptions{}, usageError{errors.New("give one of --below and --keep")}
	case hasBelow && flags.Changed("min-batch"):
		return hikoutei.SealOptions{}, usageError{errors.New("--min-batch goes with --keep: --below SEQ seals what it names")}
	case hasBelow && below == 0:
		return hikoutei.SealOptions{}, usageError{errors.New("--below 0 names no record to seal: SEQ is the first sequence " +
			"log.db keeps (--keep 0 seals every record it may)")}
	case hasBelow:
		return hikoutei.SealOptions{Below: below, MinBatch: 1}, nil
	case keep == 0:
		return hikoutei.SealOptions{Below: math.MaxUint64, MinBatch: minBatch}, nil
	}
	return hikoutei.SealOptions{Keep: keep, MinBatch: minBatch}, nil
}

// sealJSON is what `seal --json` prints.
type sealJSON struct {
	Segment  string `json:"segment"`
	First    uint64 `json:"first"`
	Last     uint64 `json:"last"`
	Records  uint64 `json:"records"`
	Kept     uint64 `json:"kept"`
	Bytes    int64  `json:"bytes"`
	Seq      uint64 `json:"seq"`
	Replaced bool   `json:"replaced"`
	Skipped  bool   `json:"skipped"`
	MinBatch uint64 `json:"min_batch"`
}

func printSeal(cmd *cobra.Command, r hikoutei.SealReport, asJSON bool) error {
	if asJSON {
		return printJSON(cmd.OutOrStdout(), sealJSON{Segment: r.Segment, First: r.First, Last: r.Last, Records: r.Records,
			Kept: r.Kept, Bytes: r.Size, Seq: r.Seq, Replaced: r.Replaced, Skipped: r.Skipped, MinBatch: r.MinBatch})
	}
	if r.Skipped && r.Last < r.First {
		_, err := fmt.Fprintln(cmd.OutOrStdout(), "nothing sealed: no record may go")
		return err
	}
	if r.Skipped {
		_, err := fmt.Fprintf(cmd.OutOrStdout(), "nothing sealed: %s may go, fewer than --min-batch %d (--min-batch 1 seals them)\n",
			spanText(r.First, r.Last), r.MinBatch)
		return err
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "sealed seqs %d..%d into %s: %d records, %d bytes (%d kept in log.db); %s at seq %d\n",
		r.First, r.Last, sealedInto(r), r.Records, r.Size, r.Kept, events.TypeSegmentSealed, r.Seq)
	return err
}

// sealedInto is where the seal put its segment: segments/NAME in the
// store's folder, else the segment's redacted location.
func sealedInto(r hikoutei.SealReport) string {
	if filepath.Base(filepath.Dir(r.Path)) == events.SegmentsDir && !strings.Contains(r.Path, "://") {
		return events.SegmentsDir + "/" + r.Segment
	}
	return r.Path
}

// spanText names the records first..last (last ≥ first): "3 records
// (seqs 41..43)".
func spanText(first, last uint64) string {
	if last == first {
		return fmt.Sprintf("1 record (seq %d)", first)
	}
	return fmt.Sprintf("%d records (seqs %d..%d)", last-first+1, first, last)
}
