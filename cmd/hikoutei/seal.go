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
	var below, keep uint64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "seal --dir DIR (--below SEQ | --keep N) [--json]",
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
an object store.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			opts, err := sealOptions(cmd.Flags(), below, keep)
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
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// sealOptions is what --below and --keep ask of the seal: exactly one
// of them. --keep 0 keeps no record back: it seals every record the
// store lets go (the library's Below past the head); --below 0 names no
// record and is refused.
func sealOptions(flags *pflag.FlagSet, below, keep uint64) (hikoutei.SealOptions, error) {
	hasBelow, hasKeep := flags.Changed("below"), flags.Changed("keep")
	switch {
	case hasBelow == hasKeep:
		return hikoutei.SealOptions{}, usageError{errors.New("give one of --below and --keep")}
	case hasBelow && below == 0:
		return hikoutei.SealOptions{}, usageError{errors.New("--below 0 names no record to seal: SEQ is the first sequence " +
			"log.db keeps (--keep 0 seals every record it may)")}
	case hasKeep && keep == 0:
		return hikoutei.SealOptions{Below: math.MaxUint64}, nil
	}
	return hikoutei.SealOptions{Below: below, Keep: keep}, nil
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
}

func printSeal(cmd *cobra.Command, r hikoutei.SealReport, asJSON bool) error {
	if asJSON {
		return printJSON(cmd.OutOrStdout(), sealJSON{Segment: r.Segment, First: r.First, Last: r.Last, Records: r.Records,
			Kept: r.Kept, Bytes: r.Size, Seq: r.Seq, Replaced: r.Replaced})
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
