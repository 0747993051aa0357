package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
)

// personalMarker is what audit shows in place of a personal value by
// default: the value exists and is not shown (docs/erasure.md).
const personalMarker = "⟦personal⟧"

// personalView decides what audit shows of a sealed personal value: never
// its sealed text. By default the marker ⟦personal⟧, or ⟦erased⟧ when the
// log's subject.erased events erased its subject's key generation; with
// --reveal-personal the value opened with the store's keys.db (read-only).
type personalView struct {
	reveal  bool
	keysDir string // the store whose keys.db --reveal-personal opens
	ring    *keyring.Ring
	erased  map[keyring.Digest]uint32 // subject digest → last generation erased
	stderr  io.Writer                 // where a note on unreadable erasures goes
	// personal is each entity's personal fields as keys.db records them:
	// their values in clear (written before the field was personal) show
	// as ⟦personal⟧ too.
	personal map[string][]string
}

// errRevealRunning refuses --reveal-personal on a running store: its
// process holds keys.db open for writing, and audit does not copy keys.
func errRevealRunning(dir string) error {
	return fmt.Errorf("%w: --reveal-personal reads %s, which the process holding the store has open: stop that process to reveal personal values, or audit without --reveal-personal (values shown as %s)",
		hikoutei.ErrStoreLocked, filepath.Join(dir, keyring.File), personalMarker)
}

// load reads the erasures the log l records and, to reveal, opens keys.db.
// Erasures it cannot read (a damaged record, a segment out of reach) do
// not stop the audit: their subjects' values show as ⟦personal⟧, never
// in clear, and a note on stderr says so.
func (p *personalView) load(l *events.Log) error {
	if p == nil {
		return nil
	}
	p.erased = map[keyring.Digest]uint32{}
	err := l.ReadStream(events.ErasureStream, 1, func(e events.Event) error {
		p.noteErasure(e)
		return nil
	})
	if err != nil && p.stderr != nil {
		fmt.Fprintf(p.stderr, "audit: the erasures could not all be read (%v): an erased subject's values may show as %s\n", err, personalMarker)
	}
	if !p.reveal || p.ring != nil {
		p.loadPersonal()
		return nil
	}
	if err := p.openKeys(); err != nil {
		return err
	}
	p.loadPersonal()
	return nil
}

// loadPersonal reads which fields keys.db records as personal (the store
// closed; a running store holds keys.db: its values in clear of those
// fields may then show, and a note on stderr says so).
func (p *personalView) loadPersonal() {
	if p.keysDir == "" || p.personal != nil {
		return
	}
	r := p.ring
	if r == nil {
		var err error
		r, err = keyring.OpenReadOnly(filepath.Join(p.keysDir, keyring.File))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && p.stderr != nil {
				fmt.Fprintf(p.stderr, "audit: %s could not be read (%v): values written before their field was personal may show in clear\n", keyring.File, err)
			}
			return
		}
		defer r.Close()
	}
	p.personal = map[string][]string{}
	for _, e := range r.Entities() {
		p.personal[e] = r.Personal(e)
	}
}

// loadMirror reads the erasures a mirror records: read reads the whole
// mirror (verified, as the audit's own pass does) before the audit prints
// anything, since an erasure comes after the values it erased.
func (p *personalView) loadMirror(read func(func(events.Event) error) error) error {
	if p == nil {
		return nil
	}
	p.erased = map[keyring.Digest]uint32{}
	return read(func(e events.Event) error {
		p.noteErasure(e)
		return nil
	})
}

// noteErasure records a subject.erased event.
func (p *personalView) noteErasure(e events.Event) {
	x, ok := e.Payload.(events.SubjectErased)
	if !ok {
		return
	}
	d, err := keyring.ParseDigest(x.Subject)
	if err == nil && uint32(x.Generation) >= p.erased[d] {
		p.erased[d] = uint32(x.Generation)
	}
}

func (p *personalView) openKeys() error {
	r, err := keyring.OpenReadOnly(filepath.Join(p.keysDir, keyring.File))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // every sealed value then fails with personal_keys_lost
	case keyring.Busy(err):
		return errRevealRunning(p.keysDir)
	case err != nil:
		return err
	}
	p.ring = r
	return nil
}

func (p *personalView) close() {
	if p != nil && p.ring != nil {
		p.ring.Close()
		p.ring = nil
	}
}

// show is what audit prints for the string s, a value of field of entity.
func (p *personalView) show(entity, field, s string) (any, error) {
	if !keyring.IsSealed(s) {
		if p != nil && !p.reveal && s != "" && s != hikoutei.Erased && slices.Contains(p.personal[entity], field) {
			return personalMarker, nil // in clear: written before the field was personal
		}
		return s, nil
	}
	if p == nil || !p.reveal {
		return p.marker(s), nil
	}
	pt, st, err := p.ring.Open(entity, field, s)
	switch {
	case errors.Is(err, keyring.ErrSealedValueMalformed):
		return personalMarker, nil // not a field value audit can name: not shown
	case err != nil:
		return nil, err
	case st == keyring.Erased:
		return hikoutei.Erased, nil
	}
	return pt, nil
}

// marker is ⟦erased⟧ when the log erased s's subject at its generation.
func (p *personalView) marker(s string) string {
	d, gen, ok := keyring.HeaderOf(s)
	if p != nil && ok {
		if g, erased := p.erased[d]; erased && gen <= g {
			return hikoutei.Erased
		}
	}
	return personalMarker
}

// shownValues replaces every sealed value of the payload p (at any depth)
// with what the auditor may see. A value is opened (--reveal-personal)
// as a field of the entity the nearest "entity" key names, under its own
// key or the "field" key beside it.
func (p *personalView) shownValues(m map[string]any, entity string) error {
	if e, ok := m["entity"].(string); ok {
		entity = e
	}
	for k, v := range m {
		nv, err := p.shownValue(v, entity, k, m)
		if err != nil {
			return err
		}
		m[k] = nv
	}
	return nil
}

func (p *personalView) shownValue(v any, entity, key string, parent map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		field := key
		if f, ok := parent["field"].(string); ok && !p.opens(entity, key, x) {
			field = f
		}
		return p.show(entity, field, x)
	case map[string]any:
		return x, p.shownValues(x, entity)
	case []any:
		for i, e := range x {
			nv, err := p.shownValue(e, entity, key, parent)
			if err != nil {
				return nil, err
			}
			x[i] = nv
		}
	}
	return v, nil
}

// opens reports whether s opens as field of entity (false without keys).
func (p *personalView) opens(entity, field, s string) bool {
	if p == nil || p.ring == nil || !keyring.IsSealed(s) {
		return false
	}
	_, _, err := p.ring.Open(entity, field, s)
	return !errors.Is(err, keyring.ErrSealedValueMalformed)
}

// shownOutboxValues is what outbox show --values prints of an entry's
// values: a sealed personal value as ⟦personal⟧, or ⟦erased⟧ when the
// log's erasures (read when the store is closed) erased its subject;
// never its sealed text, never opened.
func shownOutboxValues(stderr io.Writer, dir, entity string, vals map[string]any) map[string]any {
	sealed := false
	for _, v := range vals {
		if s, ok := v.(string); ok && keyring.IsSealed(s) {
			sealed = true
		}
	}
	if !sealed {
		return vals
	}
	p := &personalView{stderr: stderr, erased: map[keyring.Digest]uint32{}}
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, OpenTimeout: outboxLogWait})
	if err == nil {
		err = errors.Join(p.load(l), l.Close())
	}
	if err != nil {
		fmt.Fprintf(stderr, "outbox: personal values show as %s: the log's erasures could not be read (%v)\n", personalMarker, err)
	}
	out := make(map[string]any, len(vals))
	for k, v := range vals {
		if s, ok := v.(string); ok && keyring.IsSealed(s) {
			v = p.marker(s)
		}
		out[k] = v
	}
	return out
}

// outboxLogWait is how long outbox show waits for a running store's lock
// on log.db before it shows personal values without their erasures.
const outboxLogWait = 200 * time.Millisecond
