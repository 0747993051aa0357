package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/hikoutei/hikoutei-go/internal/keyring"
	"github.com/hikoutei/hikoutei-go/projector"
)

// The spreadsheet shows what people read: a personal value opened with
// its subject's key, the marker Erased once the subject was erased. The
// log, the read model and the outbox keep the sealed text; only the write
// sent to the sheet is opened, when the dispatcher claims it, and
// anti-entropy compares the sheet with canonical state the same way, so a
// sheet showing sealed text (written by an earlier build) or a value
// erased since is corrected (docs/erasure.md).

// errKeysNotOpen: a write carrying a sealed value was claimed before Open
// opened the key file; it is sent on a later pass.
var errKeysNotOpen = errors.New("the key file is not open yet")

// sheetKeys lends the engine the store's key file once Open opened it.
type sheetKeys struct {
	k    atomic.Pointer[keys]
	boot atomic.Pointer[keys] // read-only, while the engine opens (orBoot)
}

// orBoot lends the key file to the read model's mask: boot (opened
// read-only, nil: none) while the engine opens and catches the read model
// up, the store's own once Open opened it.
func (sk *sheetKeys) orBoot(boot *keys) func() *keys {
	sk.boot.Store(boot)
	return func() *keys {
		if k := sk.k.Load(); k != nil {
			return k
		}
		return sk.boot.Load()
	}
}

// shown is engine.Config.Shown: vals with every sealed value opened (the
// marker Erased for an erased subject's). A value the key file cannot open
// (lost, damaged) is left sealed — never shown empty — and reported in
// Health().Keys by openValue.
func (sk *sheetKeys) shown(entity string, vals map[string]any) (map[string]any, error) {
	if !anySealed(vals) {
		return vals, nil
	}
	k := sk.k.Load()
	if k == nil {
		return nil, errKeysNotOpen
	}
	out := make(map[string]any, len(vals))
	for name, v := range vals {
		out[name] = v
		s, ok := v.(string)
		if !ok || !keyring.IsSealed(s) {
			continue
		}
		ov, err := k.openValue(entity, name, s)
		switch {
		case err != nil:
			continue // left sealed: unreadable, as it is
		case ov == ErasedValue{}:
			out[name] = Erased
		default:
			out[name] = ov
		}
	}
	return out, nil
}

// rewriteErased queues, fenced, the rewrite of the personal cells of the
// subject's records recs (listSubjectRecords) from canonical state on every tab that shows them: sent after its key
// was destroyed, each write shows the marker (I37). It first masks, in
// the read model, the subject's personal values written in clear before
// their field was personal (remaskErased), so canonical state, and the
// cells written from it, show the marker for them too. A store opened without
// Go types (OpenDeclared) does not know which fields are personal: its
// anti-entropy pass finds the cells still showing a value and corrects
// them.
func (s *Store) rewriteErased(recs []subjectRecs) (int, error) {
	n := 0
	for _, r := range recs {
		if err := s.remaskErased(r.d, r.ids); err != nil {
			return n, err
		}
		m, err := s.e.RewriteFields(r.d.name, r.ids, r.fields)
		n += m
		if err != nil {
			return n, fmt.Errorf("rewrite %s's cells: %w", r.d.name, err)
		}
	}
	return n, nil
}

// subjectRecs is an entity that has personal fields, those fields and
// the ids of its records whose data subject is the one erased.
type subjectRecs struct {
	d           *EntityDef
	fields, ids []string
}

// listSubjectRecords lists, once for both what Erase counts and what it
// rewrites, each entity that has personal fields with those fields and
// the ids of its records whose data subject is subject (subjectRecords).
func (s *Store) listSubjectRecords(ctx context.Context, subject string) ([]subjectRecs, error) {
	var out []subjectRecs
	for _, d := range s.byType {
		fields := d.personalFields()
		if len(fields) == 0 {
			continue
		}
		ids, err := s.subjectRecords(ctx, d, subject)
		if err != nil {
			return nil, err
		}
		out = append(out, subjectRecs{d: d, fields: fields, ids: ids})
	}
	return out, nil
}

// personalFields names d's personal fields that reach the sheet.
func (d *EntityDef) personalFields() []string {
	var out []string
	for _, f := range d.fields {
		if f.personal {
			out = append(out, f.name)
		}
	}
	return out
}

// subjectRecords lists the ids of d's records whose data subject is
// subject: the record keyed subject, or those whose subject field holds it.
func (s *Store) subjectRecords(ctx context.Context, d *EntityDef, subject string) ([]string, error) {
	if d.subject < 0 {
		return []string{subject}, nil // RewriteFields skips a record that does not exist
	}
	conn, err := s.e.ReadConn(ctx)
	if err != nil {
		return nil, err
	}
	defer s.e.PutConn(conn)
	var ids []string
	q := projector.Query{Where: []projector.Cond{{Field: d.fields[d.subject].name, Value: subject}}}
	err = projector.Select(conn, d.shape(), q, func(vals []any) error {
		if id, ok := vals[0].(string); ok {
			ids = append(ids, id)
		}
		return nil
	})
	return ids, err
}
