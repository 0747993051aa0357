package keyring

import (
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// bucketPersonal records which fields of each entity are personal (the
// log's shapes do not say), so that a tool opening the store without Go
// types (hikoutei adopt) knows which entity it must not write in clear.
var bucketPersonal = []byte("personal")

// Personal is the personal fields of entity as the last SetPersonal
// recorded them (none: not recorded, or none are personal).
func (r *Ring) Personal(entity string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.personal[entity])
}

// Entities lists the entities whose personal fields the file records, in
// name order.
func (r *Ring) Entities() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.personal))
	for e := range r.personal {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// SetPersonal records the personal fields of each entity of m (an entity
// with none loses its entry); entities m does not name keep theirs. It
// writes nothing when the file already says so. Errors: ErrKeyFile.
func (r *Ring) SetPersonal(m map[string][]string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := map[string][]string{}
	for entity, fields := range m {
		fields = slices.Sorted(slices.Values(fields))
		if !slices.Equal(fields, r.personal[entity]) {
			next[entity] = fields
		}
	}
	if len(next) == 0 {
		return nil
	}
	if err := r.writable(); err != nil {
		return err
	}
	if err := r.db.Update(func(tx *bolt.Tx) error { return putPersonal(tx, next) }); err != nil {
		return fmt.Errorf("%w: record the personal fields: %w", ErrKeyFile, err)
	}
	for entity, fields := range next {
		r.personal[entity] = fields
		if len(fields) == 0 {
			delete(r.personal, entity)
		}
	}
	return nil
}

// putPersonal writes m into the personal bucket (an empty list deletes).
func putPersonal(tx *bolt.Tx, m map[string][]string) error {
	b, err := tx.CreateBucketIfNotExists(bucketPersonal)
	if err != nil {
		return err
	}
	for entity, fields := range m {
		if len(fields) == 0 {
			err = b.Delete([]byte(entity))
		} else {
			err = b.Put([]byte(entity), []byte(strings.Join(fields, "\x00")))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// loadPersonal reads the personal bucket (absent in a key file made by an
// earlier build: nothing recorded).
func (r *Ring) loadPersonal(tx *bolt.Tx) error {
	r.personal = map[string][]string{}
	b := tx.Bucket(bucketPersonal)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		r.personal[string(k)] = strings.Split(string(v), "\x00")
		return nil
	})
}
