// Package projector applies log events to the SQLite read model
// (read.sqlite): one table per entity with typed columns, the canonical
// field state, the lease history, and the internal hk_ tables, with the
// checkpoint moved in the same SQLite transaction as each applied batch.
// Rebuilding from the log yields exactly the live read model (I23).
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package projector

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/echo"
)

var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)

// ValidIdent reports whether name can be an entity or column name.
func ValidIdent(name string) bool {
	l := strings.ToLower(name)
	return identRE.MatchString(name) && !strings.HasPrefix(l, "hk_") && !strings.HasPrefix(l, "sqlite_")
}

// ValidateShapes checks that every entity can be a table: plain
// identifiers, no reserved prefix, names unique (case-insensitively), a
// known kind for every field. Errors: ErrInvalidSchema.
func ValidateShapes(shapes []events.EntityShape) error {
	seen := map[string]bool{}
	for _, t := range shapes {
		if !ValidIdent(t.Name) || seen[strings.ToLower(t.Name)] {
			return fmt.Errorf("%w: entity name %s", ErrInvalidSchema, echo.Quote(t.Name))
		}
		seen[strings.ToLower(t.Name)] = true
		if err := validateShape(t); err != nil {
			return err
		}
	}
	return nil
}

func validateShape(t events.EntityShape) error {
	cols := map[string]bool{strings.ToLower(t.PK): true}
	if !ValidIdent(t.PK) {
		return fmt.Errorf("%w: %s primary key %s", ErrInvalidSchema, t.Name, echo.Quote(t.PK))
	}
	if len(t.Fields) > maxFields {
		return fmt.Errorf("%w: %s has %d fields (at most %d)", ErrInvalidSchema, t.Name, len(t.Fields), maxFields)
	}
	for _, c := range t.Fields {
		if !ValidIdent(c.Name) || cols[strings.ToLower(c.Name)] {
			return fmt.Errorf("%w: %s column %s", ErrInvalidSchema, t.Name, echo.Quote(c.Name))
		}
		if !c.Kind.Valid() {
			return fmt.Errorf("%w: %s.%s has kind %s", ErrInvalidSchema, t.Name, c.Name, echo.Quote(string(c.Kind)))
		}
		cols[strings.ToLower(c.Name)] = true
	}
	return nil
}

func sqlType(k events.Kind) string {
	switch k {
	case events.KindInt, events.KindBool:
		return "INTEGER"
	case events.KindFloat:
		return "REAL"
	}
	return "TEXT"
}

// createSQL is the CREATE TABLE statement of t.
func createSQL(t events.EntityShape) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %q (\n  %q TEXT PRIMARY KEY NOT NULL", t.Name, t.PK)
	for _, c := range t.Fields {
		fmt.Fprintf(&b, ",\n  %q %s", c.Name, sqlType(c.Kind))
	}
	fmt.Fprintf(&b, ",\n  %q INTEGER\n)", digestColumn)
	return b.String()
}

// Fingerprint identifies a table's shape; a change means the read model
// must be rebuilt from the log.
func Fingerprint(t events.EntityShape) string {
	var b strings.Builder
	b.WriteString(createSQL(t))
	for _, c := range t.Fields {
		fmt.Fprintf(&b, "|%s:%s:%v:%s", c.Name, c.Kind, c.Nullable, c.Owner)
	}
	return fmt.Sprintf("%016x", xxhash.Sum64String(b.String()))
}
