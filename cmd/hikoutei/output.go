package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
)

// The CLI's one output convention (docs/cli.md, "JSON output"):
// a human table by default; with --json, JSON lines: a command about one
// thing prints exactly one JSON object on one line, a list or a stream
// prints one object per entry, each on its own line (nothing for an empty
// list). Notes meant for people (a list cut by --limit, where an audit
// read from) go to stderr.

// jsonShape says what a command prints with --json.
type jsonShape string

const (
	shapeObject jsonShape = "object" // exactly one line, one object
	shapeLines  jsonShape = "lines"  // one object per line, zero or more
)

// annotationJSON is the cobra annotation that records a command's shape;
// the CLI consistency test checks it against docs/cli.md's table.
const annotationJSON = "json-shape"

// addJSONFlag adds --json to cmd and records the shape it prints.
func addJSONFlag(cmd *cobra.Command, asJSON *bool, shape jsonShape) {
	help := "print one JSON object"
	if shape == shapeLines {
		help = "print JSON lines: one object per entry"
	}
	cmd.Flags().BoolVar(asJSON, "json", false, help)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[annotationJSON] = string(shape)
}

// printJSON writes v as one JSON object on one line.
func printJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// printJSONLines writes each item as one JSON line.
func printJSONLines[T any](w io.Writer, items []T) error {
	enc := json.NewEncoder(w)
	for i := range items {
		if err := enc.Encode(items[i]); err != nil {
			return err
		}
	}
	return nil
}
