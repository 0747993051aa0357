package main

import (
	"context"
	"fmt"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/segstore"
	// Object stores for --segments: gocloud.dev/blob (mem:// with it);
	// drivers.go says which clouds this binary links.
	_ "github.com/hikoutei/hikoutei-go/segstore/blobstore"
)

// segmentsUsage is the --segments flag's help.
const segmentsUsage = "where sealed segments live: file:///folder or an object store URL (s3://bucket/prefix, gs://bucket, azblob://container; " +
	"default $" + config.EnvSegmentsURL + ", else DIR/segments); its credentials and query are never shown"

// addSegmentsFlag adds --segments to cmd. Its default is not the
// environment's value (help would print it): segmentsURL reads that.
func addSegmentsFlag(cmd *cobra.Command, target *string) {
	cmd.Flags().StringVar(target, "segments", "", segmentsUsage)
}

// segmentsURL is --segments, else HIKOUTEI_SEGMENTS_URL, checked
// (usage error, exit 2, never repeating the value). An in-memory bucket
// (mem://) is refused: every process starts it empty, so a command's seal
// would remove records from log.db into a bucket gone at its exit.
func segmentsURL(flag string) (string, error) {
	v, name := flag, "--segments"
	if flag == "" {
		var err error
		if v, err = config.LoadSegmentsURL(nil); err != nil {
			return "", usageError{err}
		}
		name = "$" + config.EnvSegmentsURL
	} else if err := config.ParseSegmentsURL(flag); err != nil {
		return "", usageError{fmt.Errorf("--segments: %w", err)}
	}
	if u, err := url.Parse(v); err == nil && u.Scheme == "mem" {
		return "", usageError{fmt.Errorf("%s: %w: mem:// is an in-memory bucket that every process starts empty "+
			"(tests only): what a command seals into it is lost at its exit", name, config.ErrInvalidSegmentsURL)}
	}
	return v, nil
}

// openSegmentsFlag opens the segment store --segments (or the
// environment) names for the store dir: nil for the default folder.
// The caller closes it. Errors: segmentsURL's; segment_store_unavailable.
func openSegmentsFlag(ctx context.Context, flag, dir string) (segstore.Store, error) {
	u, err := segmentsURL(flag)
	if err != nil || u == "" {
		return nil, err
	}
	s, err := segstore.Open(ctx, u, dir)
	if err != nil {
		return nil, fmt.Errorf("segments %s: %w", segstore.Redact(u), err)
	}
	return s, nil
}

// closeSegments closes s (nil: nothing).
func closeSegments(s segstore.Store) {
	if s != nil {
		_ = s.Close()
	}
}
