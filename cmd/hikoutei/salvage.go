package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

func newSalvageCmd() *cobra.Command {
	var from, to string
	var opts events.SalvageOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "salvage --from DIR --to NEW_DIR [--head N] [--store-id ID] [--json]",
		Short: "Copy every readable record of a damaged log into a new store, naming the lost sequences",
		Long: `salvage reads the log of the store in --from (read-only: nothing in --from is
written) and copies every record it can still read into a new store in --to,
which must not exist or be an empty directory outside --from. Records keep
their bytes, sequences and store id; the lost sequences are listed, recorded
in the new log and never reused. Records the damaged B+tree no longer reaches
are found by scanning every page (only intact records up to the log's head).
Only log.db is written: the read model is rebuilt from it when the new store
is first opened; snapshots and lease.toml are not copied.
When the log's root page is lost (e.g. a truncated file) and no older copy of
it is found, the head is unknown: --head N salvages records up to N, a
sequence known to be committed (the read model's checkpoint:
sqlite3 DIR/read.sqlite "SELECT value FROM hk_meta WHERE key='checkpoint'"),
and --store-id keeps the store id (hk_meta key 'store_id'), used only when the
log's own is unreadable. When the log lost its newest commits while the read
model still has them (Open fails with log_behind_read_model, naming N), --head N
also salvages the records past the log's head up to N that are still intact in
the file.
Exit 0 when nothing was lost, 3 when sequences were lost, 1 on failure,
2 on a usage error.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return usageError{errors.New(`required flags "--from" and "--to"`)}
			}
			return runSalvage(cmd.OutOrStdout(), from, to, opts, asJSON)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "damaged store directory (read only)")
	cmd.Flags().StringVar(&to, "to", "", "new store directory: absent or empty, outside --from")
	cmd.Flags().Uint64Var(&opts.Head, "head", 0, "a committed sequence to salvage up to, used only when the log's head is unreadable")
	cmd.Flags().StringVar(&opts.StoreID, "store-id", "", "the store id, used only when the log's is unreadable")
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

func runSalvage(out io.Writer, from, to string, opts events.SalvageOptions, asJSON bool) error {
	src := filepath.Join(from, events.LogFileName)
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("%w: %s: no %s to salvage: %w", engine.ErrNotAStore, from, events.LogFileName, err)
	}
	created, err := salvageTarget(to)
	if err != nil {
		return err
	}
	rep, err := events.SalvageLog(src, filepath.Join(to, events.LogFileName), opts)
	if err != nil {
		if created {
			os.Remove(to) // only the empty directory this run made
		}
		return err
	}
	if asJSON {
		err = printJSON(out, salvageJSONOf(rep, to))
	} else {
		printSalvage(out, rep, to)
	}
	if err != nil {
		return err
	}
	if len(rep.Lost) > 0 {
		return errDamageFound
	}
	return nil
}

// salvageTarget refuses a --to inside a store directory (--from's, which
// holds its log.db, or any other: events.CheckOutside), or that exists
// and is not an empty directory; it creates --to (mode 0700) otherwise and
// reports whether it did.
func salvageTarget(to string) (created bool, err error) {
	if _, err := events.CheckOutside(to); err != nil {
		return false, fmt.Errorf("%w: --to: %w", events.ErrSalvageTarget, err)
	}
	if st, err := os.Stat(to); err == nil && !st.IsDir() {
		return false, fmt.Errorf("%w: --to %s exists and is not a directory", events.ErrSalvageTarget, to)
	}
	entries, err := os.ReadDir(to)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, os.MkdirAll(to, 0o700)
	case err != nil:
		return false, fmt.Errorf("%w: --to %s: %w", events.ErrSalvageTarget, to, err)
	case len(entries) > 0:
		return false, fmt.Errorf("%w: --to %s exists and is not empty", events.ErrSalvageTarget, to)
	}
	return false, nil
}

// salvageJSON is what `salvage --json` prints: sequence ranges as
// "1-4,7" text, counts as numbers.
type salvageJSON struct {
	Dir         string `json:"dir"`
	StoreID     string `json:"store_id"`
	NewStoreID  bool   `json:"new_store_id"`
	Head        uint64 `json:"head"`
	HeadFrom    string `json:"head_from"`
	Recovered   uint64 `json:"recovered"`
	FromScan    string `json:"from_scan,omitempty"`
	Lost        string `json:"lost,omitempty"`
	LostCount   uint64 `json:"lost_count"`
	Ambiguous   string `json:"ambiguous,omitempty"`
	Unconfirmed string `json:"unconfirmed,omitempty"`
	PastHead    int    `json:"past_head"`
	Problems    int    `json:"problems"`
	// Segments are the sealed segments kept; SegmentsLost the ones that
	// did not verify (their records are lost), each with why.
	Segments     []string `json:"segments,omitempty"`
	SegmentsLost []string `json:"segments_lost,omitempty"`
}

func salvageJSONOf(rep *events.SalvageReport, to string) salvageJSON {
	return salvageJSON{Dir: to, StoreID: rep.StoreID, NewStoreID: rep.NewStoreID, Head: rep.Head, HeadFrom: string(rep.HeadFrom),
		Recovered: rep.Recovered, FromScan: rangesText(rep.FromScan), Lost: rangesText(rep.Lost), LostCount: rep.Lost.Count(),
		Ambiguous: rangesText(rep.Ambiguous), Unconfirmed: rangesText(rep.Unconfirmed), PastHead: rep.PastHead, Problems: rep.Problems,
		Segments: rep.Segments, SegmentsLost: segmentsLost(rep)}
}

// segmentsLost is each segment a salvage could not keep, with why.
func segmentsLost(rep *events.SalvageReport) []string {
	var out []string
	for _, se := range rep.SegmentsLost {
		out = append(out, se.Error())
	}
	return out
}

func rangesText(r events.SeqRanges) string {
	if len(r) == 0 {
		return ""
	}
	return r.String()
}

func printSalvage(out io.Writer, rep *events.SalvageReport, to string) {
	id := rep.StoreID
	if rep.NewStoreID {
		id += " (new: the source's store id was unreadable)"
	}
	fmt.Fprintf(out, "salvage: store %s, head %d\n", id, rep.Head)
	if rep.Problems > 0 {
		fmt.Fprintf(out, "damage met while reading: %d places (hikoutei doctor --dir SOURCE names them)\n", rep.Problems)
	}
	switch rep.HeadFrom {
	case events.HeadFromOlder:
		fmt.Fprintln(out, "head: the newest commit's tree is unreadable; taken from the previous commit's")
	case events.HeadFromCopy:
		fmt.Fprintln(out, "head: the root page is lost; taken from an older copy of it found in the file")
	case events.HeadFromOptions:
		fmt.Fprintln(out, "head: the root page is lost; --head used")
	case events.HeadFromVouched:
		fmt.Fprintln(out, "head: --head, past the log's own (its newest commits' meta page was lost)")
	}
	fmt.Fprintf(out, "recovered: %d records", rep.Recovered)
	if len(rep.FromScan) > 0 {
		fmt.Fprintf(out, " (found outside the damaged tree: %s)", rep.FromScan)
	}
	fmt.Fprintln(out)
	if len(rep.Segments) > 0 {
		fmt.Fprintf(out, "sealed segments kept (verified, copied beside the new log): %d\n", len(rep.Segments))
	}
	for _, lost := range segmentsLost(rep) {
		fmt.Fprintf(out, "sealed segment not kept (its records are lost): %s\n", escapeControls(lost))
	}
	if len(rep.Lost) == 0 {
		fmt.Fprintln(out, "lost: none")
	} else {
		fmt.Fprintf(out, "lost: %s (%d sequences; never reused)\n", rep.Lost, rep.Lost.Count())
	}
	if len(rep.Ambiguous) > 0 {
		fmt.Fprintf(out, "ambiguous (two different intact copies, counted as lost): %s\n", rep.Ambiguous)
	}
	if len(rep.Unconfirmed) > 0 {
		fmt.Fprintf(out, "unconfirmed (intact but past the last head found, maybe never committed; counted as lost): %s\n", rep.Unconfirmed)
	}
	if rep.PastHead > 0 {
		fmt.Fprintf(out, "ignored: %d intact records past the head (a commit that never completed)\n", rep.PastHead)
	}
	fmt.Fprintf(out, "new store: %s (same store id and sequences; run `hikoutei doctor --dir %s`, then open it: the read model is rebuilt)\n", to, to)
}
