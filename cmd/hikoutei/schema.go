package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// schemaJSON is the store's recorded shapes and their history as `schema
// --json` prints it (docs/cli.md "JSON output"); `migrate --shapes` reads its
// entities back (with was= names added by hand for renames).
type schemaJSON struct {
	Entities []shapeJSON `json:"entities"`
	History  []eraJSON   `json:"history,omitempty"`
}

// shapeJSON is one entity's shape.
type shapeJSON struct {
	Name   string      `json:"name"`
	PK     string      `json:"pk"`
	PKWas  []string    `json:"pk_was,omitempty"` // migrate --shapes: the key's earlier names
	Fields []fieldJSON `json:"fields"`
}

// fieldJSON is one field's shape.
type fieldJSON struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Nullable bool     `json:"nullable"`
	Owner    string   `json:"owner"`
	NoSheet  bool     `json:"nosheet,omitempty"` // no column in the spreadsheet
	Was      []string `json:"was,omitempty"`     // migrate --shapes: the field's earlier names
}

// eraJSON is one recorded declaration: when, which entities, and the
// change that led to it (absent for the first one and for those recorded
// before changes were classified).
type eraJSON struct {
	Seq        uint64          `json:"seq"`
	Entities   []string        `json:"entities"`
	Classified bool            `json:"classified"`
	Changes    []changeJSON    `json:"changes,omitempty"`
	Migrations []migrationJSON `json:"migrations,omitempty"`
}

// changeJSON is one classified change; records and first_keys say which
// current records an incompatible one concerns.
type changeJSON struct {
	Entity    string   `json:"entity"`
	Kind      string   `json:"kind"`
	Field     string   `json:"field,omitempty"`
	From      string   `json:"from,omitempty"`
	To        string   `json:"to,omitempty"`
	Class     string   `json:"class"`
	Migration string   `json:"migration,omitempty"`
	Records   *int64   `json:"records,omitempty"`
	FirstKeys []string `json:"first_keys,omitempty"`
}

type migrationJSON struct {
	Name    string `json:"name"`
	Records int64  `json:"records"`
}

// planJSON is `migrate --dry-run --json`: every change, classified, and
// those refused (the CLI has no Go types, so it runs no migration).
type planJSON struct {
	Changes []changeJSON `json:"changes"`
	Refused []changeJSON `json:"refused"`
}

func newSchemaCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "schema --dir DIR [--json]",
		Short: "Show the entity shapes the store recorded and how they changed (the store must be closed)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			hist, err := readShapeHistory(dir)
			if err != nil {
				return err
			}
			return printSchema(cmd.OutOrStdout(), schemaOf(hist), asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// readShapeHistory reads the shape history of the log in dir, read-only.
func readShapeHistory(dir string) (events.ShapeHistory, error) {
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		return nil, events.DescribeLocked(dir, err)
	}
	defer l.Close()
	return events.ReadShapeHistory(l)
}

// schemaOf is the JSON form of a shape history; the entities are the
// newest declaration's.
func schemaOf(hist events.ShapeHistory) schemaJSON {
	out := schemaJSON{Entities: []shapeJSON{}}
	if last, ok := hist.Latest(); ok {
		for _, s := range last.Entities {
			out.Entities = append(out.Entities, shapeToJSON(s))
		}
	}
	for _, era := range hist {
		e := eraJSON{Seq: era.Seq, Entities: []string{}, Classified: era.Changed != nil}
		for _, s := range era.Declared.Entities {
			e.Entities = append(e.Entities, s.Name)
		}
		if c := era.Changed; c != nil {
			for _, ch := range c.Changes {
				e.Changes = append(e.Changes, changeToJSON(ch, nil))
			}
			for _, m := range c.Migrations {
				e.Migrations = append(e.Migrations, migrationJSON{Name: m.Name(), Records: m.Records})
			}
		}
		out.History = append(out.History, e)
	}
	return out
}

func shapeToJSON(s events.EntityShape) shapeJSON {
	j := shapeJSON{Name: s.Name, PK: s.PK, Fields: []fieldJSON{}}
	for _, f := range s.Fields {
		j.Fields = append(j.Fields, fieldJSON{Name: f.Name, Kind: string(f.Kind), Nullable: f.Nullable, Owner: string(f.Owner),
			NoSheet: f.NoSheet})
	}
	return j
}

func changeToJSON(ch events.ShapeChange, inc *aggregates.ShapeIncompatibility) changeJSON {
	j := changeJSON{Entity: ch.Entity, Kind: string(ch.Kind), Field: ch.Field, From: ch.From, To: ch.To, Class: string(ch.Class), Migration: ch.Migration}
	if inc != nil {
		n := inc.Records
		j.Records, j.FirstKeys = &n, inc.FirstKeys
	}
	return j
}

func printSchema(w io.Writer, s schemaJSON, asJSON bool) error {
	if asJSON {
		return printJSON(w, s)
	}
	if len(s.Entities) == 0 {
		_, err := fmt.Fprintln(w, "no entity shapes recorded")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, e := range s.Entities {
		fmt.Fprintf(tw, "%s\t(key %s)\t\t\n", e.Name, e.PK)
		for _, f := range e.Fields {
			kind := f.Kind
			if f.Nullable {
				kind += "?"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t\n", f.Name, kind, f.Owner)
		}
	}
	fmt.Fprintln(tw, "history\t\t\t")
	for _, era := range s.History {
		printEra(tw, era)
	}
	return tw.Flush()
}

func printEra(w io.Writer, era eraJSON) {
	if !era.Classified {
		fmt.Fprintf(w, "  seq %d\tdeclared %s\t\t\n", era.Seq, strings.Join(era.Entities, ", "))
		return
	}
	if len(era.Changes) == 0 {
		fmt.Fprintf(w, "  seq %d\tentity order changed\t\t\n", era.Seq)
	}
	for i, ch := range era.Changes {
		seq := ""
		if i == 0 {
			seq = fmt.Sprintf("seq %d", era.Seq)
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t\n", seq, changeText(ch), ch.Class)
	}
	for _, m := range era.Migrations {
		fmt.Fprintf(w, "  \tmigration %s rewrote %d record(s)\t\t\n", m.Name, m.Records)
	}
}

// changeText is one change for people: "Rec.name field_retyped string →
// float (migration Rec/v2)".
func changeText(ch changeJSON) string {
	s := ch.Entity
	if ch.Field != "" {
		s += "." + ch.Field
	}
	s += " " + ch.Kind
	switch {
	case ch.From != "" && ch.To != "":
		s += " " + ch.From + " → " + ch.To
	case ch.From != "" || ch.To != "":
		s += " " + ch.From + ch.To
	}
	if ch.Migration != "" {
		s += " (migration " + ch.Migration + ")"
	}
	return s
}

func newMigrateCmd() *cobra.Command {
	var dir, shapes string
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate --dir DIR --dry-run --shapes FILE [--json]",
		Short: "Say how the store would take other entity shapes: every change classified, and those refused (writes nothing)",
		Long: `Compares the shapes in FILE (JSON as "hikoutei schema --json" prints them; a field may
list its earlier names in "was", the key in "pk_was") with the ones the store recorded,
as the application's Open would: every change classified, and the changes some current
records cannot take, with how many records and their first keys. The CLI has no Go
types, so it runs no migration: the application's Open does (hikoutei.Migrate).
Exit 1 when a change would be refused. The store must be closed.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !dryRun {
				return usageError{errors.New("migrate needs --dry-run: the application's Open records a change and runs its migrations")}
			}
			if err := requireStore(dir); err != nil {
				return err
			}
			reg, err := readShapesFile(shapes)
			if err != nil {
				return err
			}
			plan, err := engine.PlanShapeChange(cmd.Context(), dir, engine.Config{Logger: slog.New(slog.DiscardHandler)}, func(*events.Log) (*engine.Registry, error) { return reg, nil })
			if err != nil {
				return err
			}
			return printPlan(cmd.OutOrStdout(), plan, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&shapes, "shapes", "", "JSON file of entity shapes (as schema --json prints them; required)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would change, write nothing (required)")
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// readShapesFile reads FILE's entities into a registry with their was=
// names. A missing or malformed file, or one that declares no entity, is
// a usage error.
func readShapesFile(path string) (*engine.Registry, error) {
	if path == "" {
		return nil, usageError{errors.New(`required flag "--shapes" not set`)}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError{fmt.Errorf("--shapes: %w", err)}
	}
	var s schemaJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, usageError{fmt.Errorf("--shapes %s: %w", path, err)}
	}
	if len(s.Entities) == 0 {
		// Not "no entity any more": a file that lost its entities would
		// otherwise read as the recorded shapes.
		return nil, usageError{fmt.Errorf("--shapes %s declares no entity", path)}
	}
	shapes, renames := shapesFromJSON(s.Entities)
	reg, err := engine.NewRegistry(shapes...)
	if err != nil {
		return nil, usageError{fmt.Errorf("--shapes %s: %w", path, err)}
	}
	return reg.WithRenames(renames), nil
}

func shapesFromJSON(in []shapeJSON) ([]events.EntityShape, aggregates.Renames) {
	renames := aggregates.Renames{}
	var out []events.EntityShape
	for _, e := range in {
		s := events.EntityShape{Name: e.Name, PK: e.PK}
		was := map[string][]string{}
		if len(e.PKWas) > 0 {
			was[e.PK] = e.PKWas
		}
		for _, f := range e.Fields {
			owner := events.Owner(f.Owner)
			if owner == "" {
				owner = events.OwnerSystem // as a tag without ",user"
			}
			s.Fields = append(s.Fields, events.FieldShape{Name: f.Name, Kind: events.Kind(f.Kind), Nullable: f.Nullable, Owner: owner,
				NoSheet: f.NoSheet})
			if len(f.Was) > 0 {
				was[f.Name] = f.Was
			}
		}
		if len(was) > 0 {
			renames[e.Name] = was
		}
		out = append(out, s)
	}
	return out, renames
}

func planToJSON(p *engine.ShapePlan) planJSON {
	out := planJSON{Changes: []changeJSON{}, Refused: []changeJSON{}}
	for _, ch := range p.Changes {
		out.Changes = append(out.Changes, changeToJSON(ch, incompatibilityOf(p.Incompatible, ch)))
	}
	for _, r := range p.Refused {
		n := r.Records
		out.Refused = append(out.Refused, changeJSON{Entity: r.Entity, Kind: string(r.Change), Field: r.Field, From: r.From, To: r.To,
			Class: string(events.ClassIncompatible), Records: &n, FirstKeys: r.FirstKeys})
	}
	return out
}

// incompatibilityOf finds the census of an incompatible change.
func incompatibilityOf(incs []aggregates.ShapeIncompatibility, ch events.ShapeChange) *aggregates.ShapeIncompatibility {
	if ch.Class != events.ClassIncompatible {
		return nil
	}
	for i, inc := range incs {
		if inc.Entity == ch.Entity && inc.Field == ch.Field && inc.Change == ch.Kind {
			return &incs[i]
		}
	}
	return nil
}

func printPlan(w io.Writer, p *engine.ShapePlan, asJSON bool) error {
	j := planToJSON(p)
	var err error
	if asJSON {
		err = printJSON(w, j)
	} else {
		err = printPlanText(w, j)
	}
	if err == nil && len(j.Refused) > 0 {
		return errProblemsFound
	}
	return err
}

func printPlanText(w io.Writer, p planJSON) error {
	if len(p.Changes) == 0 {
		_, err := fmt.Fprintln(w, "no change: the store recorded these shapes")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANGE\tCLASS")
	for _, ch := range p.Changes {
		fmt.Fprintf(tw, "%s\t%s\n", changeText(ch), ch.Class)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(p.Refused) == 0 {
		_, err := fmt.Fprintln(w, "Open would record the change and migrate the read model")
		return err
	}
	fmt.Fprintf(w, "Open would refuse %d change(s) some current records cannot take:\n", len(p.Refused))
	for _, r := range p.Refused {
		keys := strings.Join(r.FirstKeys, ", ")
		if r.Records != nil && int64(len(r.FirstKeys)) < *r.Records {
			keys += ", …"
		}
		fmt.Fprintf(w, "  %s: %d record(s) (%s)\n", changeText(r), *r.Records, keys)
	}
	_, err := fmt.Fprintln(w, "A migration in the application (hikoutei.Migrate) maps them; this command runs none")
	return err
}
