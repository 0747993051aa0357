// Package projector applies log events to the SQLite read model
// (read.sqlite): one table per entity with typed columns, the canonical
// field state, the lease history, and the internal hk_ tables, with the
// checkpoint moved in the same SQLite transaction as each applied batch.
// Rebuilding from the log yields exactly the live read model (I23).
package projector

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Kind is the declared type of a column.
type Kind string

// Column kinds and their SQLite storage:
//
//	string → TEXT (NFC)         int   → INTEGER
//	float  → REAL               bool  → INTEGER 0/1
//	time   → TEXT "2006-01-02T15:04:05.000Z" (UTC, ms; sorts chronologically)
const (
	KindString Kind = "string"
	KindInt    Kind = "int"
	KindFloat  Kind = "float"
	KindBool   Kind = "bool"
	KindTime   Kind = "time"
)

// Owner says who may edit a field: the application ("system") or people in
// the spreadsheet ("user").
type Owner string

// Owners.
const (
	OwnerSystem Owner = "system"
	OwnerUser   Owner = "user"
)

// Column is one field of an entity and its SQL column (same name).
type Column struct {
	Name     string
	Kind     Kind
	Nullable bool
	Owner    Owner
}

// Table is one entity's table. The primary key is a TEXT column.
type Table struct {
	Entity  string // also the table name
	PK      string // primary key column name
	Columns []Column
}

// Schema is every entity table of a read model.
type Schema struct {
	Tables []Table
}

var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)

// ValidIdent reports whether name can be an entity or column name.
func ValidIdent(name string) bool {
	l := strings.ToLower(name)
	return identRE.MatchString(name) && !strings.HasPrefix(l, "hk_") && !strings.HasPrefix(l, "sqlite_")
}

// Validate checks identifiers and uniqueness. Errors: ErrInvalidSchema.
func (s Schema) Validate() error {
	seen := map[string]bool{}
	for _, t := range s.Tables {
		if !ValidIdent(t.Entity) || seen[strings.ToLower(t.Entity)] {
			return fmt.Errorf("%w: entity name %q", ErrInvalidSchema, t.Entity)
		}
		seen[strings.ToLower(t.Entity)] = true
		if err := t.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (t Table) validate() error {
	cols := map[string]bool{strings.ToLower(t.PK): true}
	if !ValidIdent(t.PK) {
		return fmt.Errorf("%w: %s primary key %q", ErrInvalidSchema, t.Entity, t.PK)
	}
	for _, c := range t.Columns {
		if !ValidIdent(c.Name) || cols[strings.ToLower(c.Name)] {
			return fmt.Errorf("%w: %s column %q", ErrInvalidSchema, t.Entity, c.Name)
		}
		cols[strings.ToLower(c.Name)] = true
	}
	return nil
}

// Column returns the column named name.
func (t Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

func sqlType(k Kind) string {
	switch k {
	case KindInt, KindBool:
		return "INTEGER"
	case KindFloat:
		return "REAL"
	}
	return "TEXT"
}

// createSQL is the CREATE TABLE statement of t.
func (t Table) createSQL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %q (\n  %q TEXT PRIMARY KEY NOT NULL", t.Entity, t.PK)
	for _, c := range t.Columns {
		fmt.Fprintf(&b, ",\n  %q %s", c.Name, sqlType(c.Kind))
	}
	b.WriteString("\n)")
	return b.String()
}

// Fingerprint identifies the table's shape; a change means the read model
// must be rebuilt from the log.
func (t Table) Fingerprint() string {
	var b strings.Builder
	b.WriteString(t.createSQL())
	for _, c := range t.Columns {
		fmt.Fprintf(&b, "|%s:%s:%v:%s", c.Name, c.Kind, c.Nullable, c.Owner)
	}
	return fmt.Sprintf("%016x", xxhash.Sum64String(b.String()))
}
