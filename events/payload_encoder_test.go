package events

import (
	"bytes"
	"errors"
	"testing"
)

// TestPayloadEncoderMatchesTheCanonicalMap: for every catalogue entry (a
// full and a minimal sample), the direct payload encoder writes exactly
// the bytes AppendCanonical gives for EncodePayload's map (I17: one byte
// string per value), so records and hashes are unchanged by it.
func TestPayloadEncoderMatchesTheCanonicalMap(t *testing.T) {
	for _, e := range Catalogue() {
		for name, p := range samples(e) {
			m, err := EncodePayload(p)
			if err != nil {
				t.Fatalf("%s %s: %v", e.Type, name, err)
			}
			want, err := EncodeCanonical(m)
			if err != nil {
				t.Fatalf("%s %s: %v", e.Type, name, err)
			}
			got, encErr, valErr := appendPayload([]byte("prefix"), p)
			if encErr != nil || valErr != nil {
				t.Fatalf("%s %s: %v %v", e.Type, name, encErr, valErr)
			}
			if !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Errorf("%s %s:\n got %q\nwant prefix%q", e.Type, name, got, want)
			}
		}
	}
}

// TestPayloadEncoderRejectsWhatTheCanonicalMapRejects: a value without a
// canonical form (a map key that is not UTF-8, an unsupported type) fails
// the direct encoder with the canonical encoder's error, and a payload
// outside the catalogue is refused as before.
func TestPayloadEncoderRejectsWhatTheCanonicalMapRejects(t *testing.T) {
	bad := []EntityPersisted{
		{Entity: "A", ID: "1", Fields: map[string]any{"x": struct{}{}}},
		{Entity: "A", ID: "1", Revisions: map[string]uint64{"\xff": 1}},
		{Entity: "A", ID: "\xff"},
	}
	for i, p := range bad {
		m, err := EncodePayload(p)
		if err != nil {
			t.Fatal(err)
		}
		_, wantErr := EncodeCanonical(m)
		_, encErr, valErr := appendPayload(nil, p)
		if wantErr == nil || encErr != nil || valErr == nil || valErr.Error() != wantErr.Error() {
			t.Errorf("case %d: got %v / %v, want %v", i, encErr, valErr, wantErr)
		}
	}
	if _, encErr, _ := appendPayload(nil, foreignPayload{}); !errors.Is(encErr, ErrUnknownEventType) {
		t.Errorf("foreign payload: %v", encErr)
	}
}
