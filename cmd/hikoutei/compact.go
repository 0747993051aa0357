package main

import (
	"fmt"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

func newCompactCmd() *cobra.Command {
	var dir, segments string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compact --dir DIR [--segments URL] [--json]",
		Short: "Shrink a closed store's log.db: rewrite it without its free pages, verified before it replaces the original",
		Long: `compact rewrites DIR/log.db into DIR/log.db.compact (mode 0600) holding the same
records without the free pages that seals left (log.db reuses them but never
gives them back to the filesystem), syncs it, walks its hash chain from the
first record across the sealed segments to the original's head, and only then
renames it over log.db and syncs the folder. A crash at any step leaves the
original log.db intact; a leftover log.db.compact is replaced by the next
compact. It needs the store closed (a running store: store_locked, nothing
changed), holds the log's file lock throughout and uses no network. It prints
log.db's size before and after. Before the copy it removes from log.db the
stream index entries an earlier build kept for sealed records. A store whose
segments live in an object store needs --segments (or $HIKOUTEI_SEGMENTS_URL)
so that the walk reads them.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			segs, err := openSegmentsFlag(cmd.Context(), segments, dir)
			if err != nil {
				return err
			}
			defer closeSegments(segs)
			rep, err := hikoutei.Compact(cmd.Context(), dir, hikoutei.CompactOptions{Segments: segs})
			if err != nil {
				return err
			}
			return printCompact(cmd, rep, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// compactJSON is what `compact --json` prints.
type compactJSON struct {
	BytesBefore      int64  `json:"bytes_before"`
	BytesAfter       int64  `json:"bytes_after"`
	Head             uint64 `json:"head"`
	HeadHash         string `json:"head_hash"`
	Records          uint64 `json:"records_verified"`
	ReplacedLeftover bool   `json:"replaced_leftover"`
}

func printCompact(cmd *cobra.Command, r hikoutei.CompactReport, asJSON bool) error {
	if asJSON {
		return printJSON(cmd.OutOrStdout(), compactJSON{BytesBefore: r.Before, BytesAfter: r.After, Head: r.Head.Seq,
			HeadHash: r.Head.Hash.String(), Records: r.Records, ReplacedLeftover: r.ReplacedLeftover})
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "compacted log.db: %d bytes before, %d after (%s freed); chain verified through seq %d (%d records)\n",
		r.Before, r.After, byteText(max(0, r.Before-r.After)), r.Head.Seq, r.Records)
	return err
}
