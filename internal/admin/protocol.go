// Package admin is the store's local administrative channel: a Unix domain
// socket in the store directory (SocketName, mode 0600) served by the
// process that holds the writer lease, speaking a small versioned JSON
// protocol, one request and one response per connection. Only processes of
// the store owner's uid may use it (file mode plus an SO_PEERCRED check);
// it never listens on a network: a Unix socket is local by construction.
package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"strings"
)

// Version is the protocol version this build speaks.
const Version = 1

// MaxRequestBytes caps one request (the envelope and its body).
const MaxRequestBytes = 64 << 10

// maxResponseBytes caps what a client reads back.
const maxResponseBytes = 1 << 20

// Op names a request kind.
type Op string

// Ops. OpConflictResolve and OpQuarantineDismiss are reserved for the
// commands being built beside this channel: a store registers their
// handlers with Mux.Handle; until then they answer admin_op_unsupported.
const (
	OpStatus            Op = "status"
	OpConflictAck       Op = "conflicts.ack"
	OpConflictResolve   Op = "conflicts.resolve"
	OpQuarantineDismiss Op = "quarantine.dismiss"
	// OpStoreBackup writes a consistent copy of the store's log to a file
	// the requester names (read-only for the store).
	OpStoreBackup Op = "store.backup"
)

// Request is the envelope a client sends: one JSON object, then a newline
// (or the end of its half of the connection).
type Request struct {
	Version int             `json:"v"`
	Op      Op              `json:"op"`
	Body    json.RawMessage `json:"body,omitempty"`
}

// Response is the server's answer. A failed request carries Code (a stable
// snake_case code: the one the error's message starts with, when it is
// registered), Codes (every registered code the error matches, Code
// first: an error can match several, e.g. conflict_not_open and the
// legacy acknowledge_rejected) and Message (the error's one line), and may
// carry Body (e.g. the outcome of a stale command). A client of an older
// build ignores Codes and still reads Code.
type Response struct {
	Version int             `json:"v"`
	OK      bool            `json:"ok"`
	Code    string          `json:"code,omitempty"`
	Codes   []string        `json:"codes,omitempty"`
	Message string          `json:"message,omitempty"`
	Body    json.RawMessage `json:"body,omitempty"`
}

// StatusResponse answers OpStatus (read-only).
type StatusResponse struct {
	Protocol      int    `json:"protocol"`
	PID           int    `json:"pid"`
	Operation     string `json:"operation"`
	LogHead       uint64 `json:"log_head"`
	OpenConflicts int    `json:"open_conflicts"`
	// Local is why the store refuses commits now (its Health().Local,
	// e.g. "log_file_replaced: …"), with LocalCode its stable code;
	// absent while it commits.
	Local     string `json:"local,omitempty"`
	LocalCode string `json:"local_code,omitempty"`
	// Retention is the store's retention policy state (off, on, failing,
	// not_running; absent from older versions), RetentionDetail why it
	// fails or does not run, RetentionCode the failure's code
	// (retention_failing).
	Retention       string `json:"retention,omitempty"`
	RetentionDetail string `json:"retention_detail,omitempty"`
	RetentionCode   string `json:"retention_code,omitempty"`
	// SegmentsScheme and SegmentsAt are where the store's sealed segments
	// live (dir and a folder, or an object store's scheme and redacted
	// bucket and path); Segments is why the last read or write of one
	// could not reach that store (its Health().Segments), with
	// SegmentsCode its code; absent while it answers.
	SegmentsScheme string `json:"segments_scheme,omitempty"`
	SegmentsAt     string `json:"segments_at,omitempty"`
	Segments       string `json:"segments,omitempty"`
	SegmentsCode   string `json:"segments_code,omitempty"`
}

// AckRequest is OpConflictAck: acknowledge_system with its fence.
type AckRequest struct {
	ConflictID        string `json:"conflict_id"`
	CanonicalRevision uint64 `json:"canonical_revision"`
	CandidateHash     string `json:"candidate_hash"`
	CandidateEpoch    int64  `json:"candidate_epoch"`
}

// ResolveRequest is OpConflictResolve: a person's resolution of a
// conflict (keep_system or use_sheet), fenced by Fence when given (else
// by the fence the store shows when it runs the command), idempotent by
// CommandID when given.
type ResolveRequest struct {
	ConflictID string      `json:"conflict_id"`
	Resolution string      `json:"resolution"`
	CommandID  string      `json:"command_id,omitempty"`
	Fence      *AckRequest `json:"fence,omitempty"`
}

// DismissRequest is OpQuarantineDismiss: drop a person's quarantined
// edit (the row is rewritten to canonical state by full-row CAS).
type DismissRequest struct {
	QuarantineID string `json:"quarantine_id"`
}

// DismissResponse reports OpQuarantineDismiss.
type DismissResponse struct {
	Queued bool `json:"queued"`
}

// AckResponse reports OpConflictAck and OpConflictResolve.
type AckResponse struct {
	Outcome         string `json:"outcome"`
	ReconcileEffect string `json:"reconcile_effect,omitempty"`
}

// DecodeRequest parses one request strictly: a single JSON object with only
// the envelope's keys, a known version and a non-empty op. Errors:
// ErrMalformedRequest, ErrVersionUnsupported.
func DecodeRequest(b []byte) (Request, error) {
	var r Request
	if err := decodeStrict(b, &r); err != nil {
		return Request{}, fmt.Errorf("%w: %w", ErrMalformedRequest, err)
	}
	if r.Version != Version {
		return Request{}, fmt.Errorf("%w: version %d (this store speaks %d)", ErrVersionUnsupported, r.Version, Version)
	}
	if r.Op == "" {
		return Request{}, fmt.Errorf("%w: no op", ErrMalformedRequest)
	}
	return r, nil
}

// decodeStrict decodes exactly one JSON value with no unknown keys. Keys
// match their field's name exactly (encoding/json alone also accepts
// "OP" for "op"), and no object holds a key twice (encoding/json alone
// keeps the last one).
func decodeStrict(b []byte, v any) error {
	if err := checkKeys(b, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the request")
	}
	return nil
}

// checkKeys walks the first JSON value of b against the type t it is
// decoded into: every object key must be one of the struct's JSON names,
// spelt exactly, and appear once; json.RawMessage and interface values
// are checked for duplicate keys only (their own decoding checks the
// rest). Malformed JSON is left to the decoder.
func checkKeys(b []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err := walkKeys(dec, t, "")
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil // the decoder says what is wrong
	}
	return err
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// walkKeys reads one value from dec, checking its keys against t (nil:
// duplicates only).
func walkKeys(dec *json.Decoder, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || t != nil && t.Kind() == reflect.Interface {
		t = nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec, t, path)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkKeys(dec, elem, path+"[]"); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}

func walkObject(dec *json.Decoder, t reflect.Type, path string) error {
	var fields map[string]reflect.Type
	var isMap bool
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = jsonFields(t)
		case reflect.Map:
			isMap = true
		}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("duplicate key %q%s", key, at(path))
		}
		seen[key] = true
		var ft reflect.Type
		switch {
		case fields != nil:
			var ok bool
			if ft, ok = fields[key]; !ok {
				return fmt.Errorf("unknown key %q%s (keys are case-sensitive)", key, at(path))
			}
		case isMap:
			ft = t.Elem()
		}
		if err := walkKeys(dec, ft, path+"."+key); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

func at(path string) string {
	if path = strings.TrimPrefix(path, "."); path == "" {
		return ""
	}
	return " in " + path
}

// jsonFields maps a struct's JSON key names to their field types (fields
// without a tag go by their Go name; "-" and unexported fields are
// skipped).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(out, jsonFields(f.Type))
			continue
		}
		if !f.IsExported() {
			continue
		}
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// BackupRequest is OpStoreBackup: the serving process writes a consistent
// copy of its log.db to Out (an absolute path outside the store
// directory; mode 0600), replacing an existing file only with Force.
type BackupRequest struct {
	Out   string `json:"out"`
	Force bool   `json:"force,omitempty"`
}

// BackupResponse reports OpStoreBackup: what the copy holds (never a
// payload).
type BackupResponse struct {
	StoreID     string `json:"store_id"`
	Head        uint64 `json:"head"`
	ReplicaHead uint64 `json:"replica_head,omitempty"`
	Bytes       int64  `json:"bytes"`
	SHA256      string `json:"sha256"`
	Segments    int    `json:"segments,omitempty"`
}
