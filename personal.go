package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Erased is what a typed read (Get, Find, a View's) finds in a personal
// field whose data subject was erased: the value is gone for good. Events,
// subscriptions and View.Record carry ErasedValue instead. A unit that
// persists a record whose personal field holds Erased keeps it as the
// marker (it is not sealed: it is no one's data).
const Erased = "⟦erased⟧"

// ErasedValue is the typed marker that stands for an erased personal
// value in an event's fields (Events, Subscribe, SubscribeTx) and in
// View.Record: never an empty string.
type ErasedValue struct{}

// String is Erased.
func (ErasedValue) String() string { return Erased }

// MarshalText is Erased: JSON shows the marker, not an empty object.
func (ErasedValue) MarshalText() ([]byte, error) { return []byte(Erased), nil }

// keys is a store's key file and the last failure to use it.
type keys struct {
	ring  atomic.Pointer[keyring.Ring] // nil: the store has no key file
	raw   bool                         // leave sealed values sealed (migrations)
	own   bool                         // opened for a View (AsOfDir), which closes it
	erase sync.Mutex                   // one erasure at a time
	// fetch, when set, fetches a subject's key missing from the key file
	// (a standby's key stream) and reports whether it got one.
	fetch func(keyring.Digest) bool
	decls map[string]personalDecl // by entity: masks values in clear (personal_clear.go)
	mu    sync.Mutex
	err   error // latched: Health().Keys
}

// rawKeys opens nothing: sealed values stay as they are.
var rawKeys = &keys{raw: true}

// openKeys opens the store's key file, creating it when an entity declares
// personal fields; a store without personal fields and without a key file
// gets none. It then reports a key file that does not match the values the
// read model holds (lost).
func openKeys(dir string, byType map[reflect.Type]*EntityDef) (*keys, error) {
	create := false
	for _, d := range byType {
		create = create || d.hasPersonal()
	}
	r, err := keyring.Open(filepath.Join(dir, keyring.File), create)
	if errors.Is(err, fs.ErrNotExist) {
		return &keys{decls: declsOf(byType)}, nil
	}
	if err != nil {
		return nil, err
	}
	k := &keys{decls: declsOf(byType)}
	k.ring.Store(r)
	return k, nil
}

func (k *keys) note(err error) {
	if errors.Is(err, ErrPersonalKeysLost) || errors.Is(err, ErrPersonalKeyFile) {
		k.mu.Lock()
		k.err = err
		k.mu.Unlock()
	}
}

// recovered clears a latched personal_key_file once a key file operation
// succeeds again (a lost key file stays reported).
func (k *keys) recovered() {
	k.mu.Lock()
	if errors.Is(k.err, ErrPersonalKeyFile) {
		k.err = nil
	}
	k.mu.Unlock()
}

// forget clears a latched personal_keys_lost (a takeover that brought
// the key file up to its key stream checks the keys again).
func (k *keys) forget() {
	k.mu.Lock()
	k.err = nil
	k.mu.Unlock()
}

func (k *keys) health() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

func (k *keys) close() error {
	if k == nil || k.ring.Load() == nil {
		return nil
	}
	return k.ring.Load().Close()
}

// hasPersonal reports whether d declares a personal field.
func (d *EntityDef) hasPersonal() bool {
	for _, f := range d.fields {
		if f.personal {
			return true
		}
	}
	return false
}

// subjectOf is the data subject of the record v with key id: the key, or
// the subject field's value.
func (d *EntityDef) subjectOf(v reflect.Value, id string) (string, error) {
	if d.subject < 0 {
		return id, nil
	}
	f := d.fields[d.subject]
	s, err := events.NormalizeString(v.FieldByIndex(f.index).String())
	if err == nil && strings.TrimSpace(s) == "" {
		err = errors.New("empty")
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s %q.%s (the data subject): %w", ErrInvalidValue, d.name, id, f.name, err)
	}
	return s, nil
}

// sealUnit seals the personal values of the unit's commands in place:
// every subject's key exists durably in the key file before its sealed
// values are handed to the writer.
func (s *Store) sealUnit(cmds []engine.Command, ops []unitOp) error {
	digests := make([]keyring.Digest, len(cmds))
	var need []keyring.Digest
	for i, op := range ops {
		if cmds[i].Values == nil || !op.def.hasPersonal() {
			continue
		}
		if s.keys.ring.Load() == nil {
			return fmt.Errorf("%w: %s declares personal fields and the store has no key file", ErrPersonalKeyFile, op.def.name)
		}
		subject, err := op.def.subjectOf(op.ptr.Elem(), op.id)
		if err != nil {
			return err
		}
		digests[i] = s.keys.ring.Load().Digest(subject)
		need = append(need, digests[i])
	}
	if len(need) == 0 {
		return nil
	}
	fresh, err := s.keys.ring.Load().Ensure(need)
	if err != nil {
		s.keys.note(err)
		return err
	}
	s.keys.recovered()
	if err := s.krep.grant(context.Background(), s.keys.ring.Load(), fresh); err != nil {
		return err
	}
	for i, op := range ops {
		if err := s.sealValues(op.def, digests[i], cmds[i].Values); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) sealValues(d *EntityDef, digest keyring.Digest, vals map[string]any) error {
	if vals == nil {
		return nil
	}
	for _, f := range d.fields {
		v, ok := vals[f.name].(string)
		if !f.personal || !ok || v == Erased {
			continue
		}
		sealed, err := s.keys.ring.Load().Seal(d.name, f.name, digest, v)
		if err != nil {
			return err
		}
		vals[f.name] = sealed
	}
	return nil
}

// openValue opens a value read from the read model or the log: a sealed
// value with its subject's key (Erased once the subject was erased); any
// other value as it is, and so a value of a field that is not personal
// which starts with the sealed prefix and is not a sealed value (text a
// person typed: it must not make its record unreadable).
func (k *keys) openValue(entity, field string, v any) (any, error) {
	s, ok := v.(string)
	if !ok || !keyring.IsSealed(s) || (k != nil && k.raw) {
		return v, nil
	}
	var ring *keyring.Ring
	if k != nil {
		ring = k.ring.Load()
	}
	pt, st, err := ring.Open(entity, field, s)
	if d, ok := keyring.SubjectOf(s); errors.Is(err, ErrPersonalKeysLost) && k != nil && k.fetch != nil && ok && k.fetch(d) {
		pt, st, err = ring.Open(entity, field, s)
	}
	if err != nil && errors.Is(err, ErrSealedValueMalformed) && !k.personalField(entity, field) {
		return v, nil // a plain value that happens to start with the prefix
	}
	if err != nil {
		if k != nil {
			k.note(err)
		}
		return nil, err
	}
	if st == keyring.Erased {
		return ErasedValue{}, nil
	}
	return pt, nil
}

// personalField reports whether the key file records field of entity as
// personal (Open records the declared ones).
func (k *keys) personalField(entity, field string) bool {
	if k == nil || k.ring.Load() == nil {
		return false
	}
	return slices.Contains(k.ring.Load().Personal(entity), field)
}

// openPayload opens the sealed values of an entity.persisted payload (a
// copy: the log's event is not changed).
func (k *keys) openPayload(p events.Payload) (events.Payload, error) {
	x, ok := p.(events.EntityPersisted)
	if !ok {
		return p, nil
	}
	if k != nil {
		x.Fields = k.maskFields(x.Entity, x.ID, x.Fields, ErasedValue{})
	}
	if !anySealed(x.Fields) {
		return x, nil
	}
	fields := make(map[string]any, len(x.Fields))
	for name, v := range x.Fields {
		ov, err := k.openValue(x.Entity, name, v)
		if err != nil {
			return p, fmt.Errorf("%s %q: %w", x.Entity, x.ID, err)
		}
		fields[name] = ov
	}
	x.Fields = fields
	return x, nil
}

func anySealed(m map[string]any) bool {
	for _, v := range m {
		if s, ok := v.(string); ok && keyring.IsSealed(s) {
			return true
		}
	}
	return false
}

// isPersonal reports whether name is a personal field of d.
func (d *EntityDef) isPersonal(name string) bool {
	i, ok := d.byName[name]
	return ok && d.fields[i].personal
}

// startKeys finishes the erasures a crash interrupted (their mark is in the
// key file: the event is committed again, then the key destroyed) and
// checks that the key file opens the values the read model holds.
func (s *Store) startKeys(ctx context.Context) error {
	if s.keys.ring.Load() == nil {
		return nil
	}
	if s.e.Role() == engine.RoleStandby {
		return nil
	}
	for _, d := range s.keys.ring.Load().Pending() {
		if err := s.finishErasure(ctx, d, ActorApplication); err != nil {
			return fmt.Errorf("finish an interrupted erasure: %w", err)
		}
	}
	s.checkKeys(ctx)
	return nil
}

// checkKeys opens one sealed value of each personal field the read model
// holds: a key file that cannot is reported in Health().Keys
// (personal_keys_lost), never silently.
func (s *Store) checkKeys(ctx context.Context) {
	conn, err := s.e.ReadConn(ctx)
	if err != nil {
		return
	}
	defer s.e.PutConn(conn)
	for _, d := range s.byType {
		for _, f := range d.fields {
			if !f.personal {
				continue
			}
			q := projector.Query{Where: []projector.Cond{{Field: f.name, Op: projector.OpPrefix, Value: keyring.Prefix}}, Limit: 1}
			_ = projector.Select(conn, d.shape(), q, func(vals []any) error {
				_, err := s.keys.openValue(d.name, f.name, vals[1+d.byName[f.name]])
				return err // noted by openValue
			})
		}
	}
}

func keyFile(dir string) string { return filepath.Join(dir, keyring.File) }

// readKeys opens a closed store's key file read-only for a View (none:
// sealed values are reported as personal_keys_lost when read).
func readKeys(dir string) (*keys, error) {
	r, err := keyring.OpenReadOnly(keyFile(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return &keys{}, nil
	}
	if err != nil {
		return nil, err
	}
	k := &keys{own: true}
	k.ring.Store(r)
	return k, nil
}

// holdsSealed reports whether any record of shape holds a sealed value.
func (s *Store) holdsSealed(ctx context.Context, shape events.EntityShape) (bool, error) {
	conn, err := s.e.ReadConn(ctx)
	if err != nil {
		return false, err
	}
	defer s.e.PutConn(conn)
	found := false
	for _, f := range shape.Fields {
		if f.Kind != events.KindString || found {
			continue
		}
		q := projector.Query{Where: []projector.Cond{{Field: f.Name, Op: projector.OpPrefix, Value: keyring.Prefix}}, Limit: 1}
		err := projector.Select(conn, shape, q, func([]any) error { found = true; return nil })
		if err != nil {
			return false, err
		}
	}
	return found, nil
}

// recordPersonal records in the key file which fields of the declared
// entities are personal (the log's shapes do not say), for the tools that
// open the store without Go types (hikoutei adopt). A failure is reported
// in Health().Keys; the store opens.
func (s *Store) recordPersonal() {
	if s.e.Role() != engine.RoleStandby {
		s.recordPersonalNow()
	}
}

// recordPersonalNow is recordPersonal in any role (a takeover).
func (s *Store) recordPersonalNow() {
	ring := s.keys.ring.Load()
	if ring == nil || s.byType == nil {
		return
	}
	m := map[string][]string{}
	for _, d := range s.byType {
		m[d.name] = nil
		for _, f := range d.fields {
			if f.personal {
				m[d.name] = append(m[d.name], f.name)
			}
		}
	}
	s.keys.note(ring.SetPersonal(m))
}
