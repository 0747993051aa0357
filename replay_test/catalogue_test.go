package replaytest

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// TestCommittedRecordsRoundTripThroughTheCatalogue pins "record bytes and
// canonical hashes of existing events stay identical" on both committed
// logs. Every record (but schema_v1's audit.note, see
// TestSchemaV1UnknownEventTypeFailsReplay) decodes into its catalogue type
// with its envelope intact, and its stored payload bytes are canonical.
// Then:
//
//   - a record stored at its type's current schema re-encodes exactly:
//     events.EncodeCanonical(events.EncodePayload(decoded payload)) equals
//     the stored payload bytes (so events.Hash of the re-encoded payload
//     equals the hash of the stored bytes), and events.MarshalRecord of the
//     decoded event equals the whole stored record, checksum included, but
//     for its record format: this build writes the hex token of a format-1
//     record packed (format 2), every other byte of the record the same
//     (samePackedToken).
//     That is 9 records of the airports log and 5 of schema_v1's.
//
//   - the entity.persisted records stored at schema 2 (64 of airports, 4 of
//     schema_v1): the upcast to schema 3 is the identity, so the typed
//     re-encoding equals the stored payload bytes (and hash); their
//     MarshalRecord is a schema-3 record (leaving out a first create's
//     revisions) that reads back as the same event (checkRestamped).
//
//   - the records that differ, and why: the 5 entity.persisted records of
//     schema_v1 stored at schema 1 (seqs 2, 3, 4, 5, 6). Reading upcasts
//     them to schema 2 (and 3), so re-encoding yields the schema-2 map {entity, id,
//     created, fields, revisions}, not the stored schema-1 map {entity, id,
//     values, revisions}: "values" is renamed "fields", and "created" is
//     added, true exactly when every revision is 1 (seq 5, an update at
//     revision 2, is false). The test asserts that exact difference: the
//     re-encoding equals the canonical encoding of that upcast map built
//     here from the stored one, and its values and revisions are the stored
//     ones unchanged. The stored bytes are never rewritten (reads only
//     upcast), so their hashes are unchanged too.
//
// No record differs because of an optional (omitempty) key: the committed
// logs hold lease, schema and entity events only, whose payload structs
// have no omitempty field, and every key they store is present in the
// typed re-encoding.
func TestCommittedRecordsRoundTripThroughTheCatalogue(t *testing.T) {
	want := map[string]struct{ identical, restamped, upcast int }{"airports": {9, 64, 0}, "schema_v1": {5, 4, 5}}
	for _, name := range recordedLogs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var identical, restamped, upcast []uint64
			for _, r := range rawRecords(t, logDir(name)) {
				if name == unknownLog && r.Seq == unknownSeq {
					continue // audit.note: no catalogue type (TestSchemaV1UnknownEventTypeFailsReplay)
				}
				entry, ok := events.Lookup(r.Type)
				if !ok {
					t.Fatalf("seq %d: type %q is not in the catalogue", r.Seq, r.Type)
				}
				e, err := events.DecodeRecord(r.Seq, r.Bytes)
				must(t, err)
				if e.Seq != r.Seq || e.Stream != r.Stream || e.Version != r.Version || !e.At.Equal(r.At) ||
					e.Epoch != r.Epoch || e.Token != r.Token || e.Commit != r.Commit || e.Type() != r.Type {
					t.Fatalf("seq %d: decoded envelope %+v differs from the stored %s v%d %s", r.Seq, e, r.Stream, r.Version, r.Type)
				}
				if got := reflect.TypeOf(e.Payload); got != entry.Go {
					t.Fatalf("seq %d %s: payload is %v, catalogue type %v", r.Seq, r.Type, got, entry.Go)
				}

				stored := canonicalMap(t, r)
				if again, err := events.EncodeCanonical(stored); err != nil || !bytes.Equal(again, r.Payload) {
					t.Fatalf("seq %d: stored payload is not canonical (%v)", r.Seq, err)
				}
				m, err := events.EncodePayload(e.Payload)
				must(t, err)
				got, err := events.EncodeCanonical(m)
				must(t, err)

				if r.Schema == entry.Schema {
					if !bytes.Equal(got, r.Payload) {
						t.Errorf("seq %d %s: re-encoded payload differs from the stored one:\n got  %q\n want %q", r.Seq, r.Type, got, r.Payload)
						continue
					}
					h, err := events.Hash(m)
					must(t, err)
					if h != events.HashBytes(r.Payload) {
						t.Errorf("seq %d: hash of the re-encoded payload %s, of the stored bytes %s", r.Seq, h, events.HashBytes(r.Payload))
					}
					rec, err := events.MarshalRecord(e)
					must(t, err)
					if !bytes.Equal(rec, r.Bytes) && !samePackedToken(t, r, rec) {
						t.Errorf("seq %d %s: MarshalRecord of the decoded event differs from the stored record", r.Seq, r.Type)
						continue
					}
					identical = append(identical, r.Seq)
					continue
				}

				if r.Type == events.TypeEntityPersisted && r.Schema == 2 && entry.Schema == 3 {
					checkRestamped(t, r, e, got)
					restamped = append(restamped, r.Seq)
					continue
				}
				// The only other documented difference: schema-1 entity.persisted, upcast on read.
				if r.Type != events.TypeEntityPersisted || r.Schema != 1 || entry.Schema != 3 {
					t.Errorf("seq %d: %s stored at schema %d (this build writes %d): an undocumented difference", r.Seq, r.Type, r.Schema, entry.Schema)
					continue
				}
				values, _ := stored["values"].(map[string]any)
				revs, _ := stored["revisions"].(map[string]any)
				if values == nil || revs == nil || len(stored) != 4 || stored["entity"] == nil || stored["id"] == nil {
					t.Fatalf("seq %d: schema-1 %s not in the schema-1 shape: %v", r.Seq, events.TypeEntityPersisted, stored)
				}
				created := len(revs) > 0
				for _, rev := range revs {
					created = created && rev == int64(1)
				}
				upcastMap := map[string]any{"entity": stored["entity"], "id": stored["id"], "created": created, "fields": values, "revisions": revs}
				wantBytes, err := events.EncodeCanonical(upcastMap)
				must(t, err)
				if bytes.Equal(got, r.Payload) || !bytes.Equal(got, wantBytes) {
					t.Errorf("seq %d: schema-1 record re-encodes as\n %q\nwant its schema-2 upcast\n %q\nstored\n %q", r.Seq, got, wantBytes, r.Payload)
					continue
				}
				upcast = append(upcast, r.Seq)
			}
			if w := want[name]; len(identical) != w.identical || len(restamped) != w.restamped || len(upcast) != w.upcast {
				t.Fatalf("%d records re-encode identically, %d restamped, %d are upcast (seqs %v); want %d, %d and %d",
					len(identical), len(restamped), len(upcast), upcast, w.identical, w.restamped, w.upcast)
			}
			if name == unknownLog && !reflect.DeepEqual(upcast, []uint64{2, 3, 4, 5, 6}) {
				t.Fatalf("upcast records are seqs %v, want 2-6", upcast)
			}
		})
	}
}

// checkRestamped: an entity.persisted stored at schema 2 reads through the
// identity upcast to 3, so its typed re-encoding is the stored payload
// (same bytes, same hash); only its record differs: MarshalRecord writes
// it at schema 3, which leaves out the revisions of a first create, and
// that record reads back as the same event.
func checkRestamped(t *testing.T, r rawRecord, e events.Event, got []byte) {
	t.Helper()
	if !bytes.Equal(got, r.Payload) {
		t.Errorf("seq %d: schema-2 %s re-encodes as\n %q\nstored\n %q", r.Seq, r.Type, got, r.Payload)
		return
	}
	rec, err := events.MarshalRecord(e)
	must(t, err)
	back, err := events.DecodeRecord(r.Seq, rec)
	must(t, err)
	if !reflect.DeepEqual(back, e) {
		t.Errorf("seq %d: its schema-3 record reads back as %+v, not %+v", r.Seq, back, e)
	}
}

// samePackedToken: rec, MarshalRecord of the event stored as r in record
// format 1, is the same record in format 2 (its hex token packed into the
// bytes it spells): every field, the payload bytes included, is r's.
func samePackedToken(t *testing.T, r rawRecord, rec []byte) bool {
	t.Helper()
	again, err := parseRawRecord(r.Seq, rec)
	must(t, err)
	shorter := len(rec) == len(r.Bytes)-len(r.Token)/2
	again.Bytes, r.Bytes = nil, nil
	return rec[0] == 2 && r.Token != "" && shorter && reflect.DeepEqual(again, r)
}
