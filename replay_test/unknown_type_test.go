package replaytest

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// wantUnknownAuditNote fails unless err is the typed error of the
// schema_v1 log's audit.note record: *events.PayloadError wrapping
// events.ErrUnknownEventType, naming that record's seq and type.
func wantUnknownAuditNote(t *testing.T, what string, err error) {
	t.Helper()
	var pe *events.PayloadError
	if !errors.Is(err, events.ErrUnknownEventType) || !errors.As(err, &pe) {
		t.Fatalf("%s: err %v, want *events.PayloadError wrapping events.ErrUnknownEventType", what, err)
	}
	if pe.Seq != unknownSeq || pe.Type != auditNoteType {
		t.Fatalf("%s: error names seq %d type %q (%v), want seq %d type %q", what, pe.Seq, pe.Type, err, unknownSeq, auditNoteType)
	}
	if errors.Is(err, events.ErrCorruptRecord) {
		t.Fatalf("%s: an intact record of an unknown type reported as corrupt: %v", what, err)
	}
}

// TestSchemaV1UnknownEventTypeFailsReplay: the schema_v1 log as recorded
// holds one record whose type no build ever defined (audit.note, seq
// unknownSeq). An unknown event type is a typed error, never skipped:
// replaying the committed log fails at that record and applies nothing
// past it; decoding the record and reading the log fail the same way, and
// so does opening a copy of it as a live store.
func TestSchemaV1UnknownEventTypeFailsReplay(t *testing.T) {
	dir := logDir(unknownLog)
	raw := rawRecords(t, dir)
	if r := raw[unknownSeq-1]; r.Seq != unknownSeq || r.Type != auditNoteType || r.Stream != auditStream {
		t.Fatalf("record %d is %s %s, not the audit.note record", r.Seq, r.Stream, r.Type)
	}
	for _, r := range raw {
		if _, known := events.Lookup(r.Type); !known && r.Seq != unknownSeq {
			t.Fatalf("seq %d has a second unknown type %q", r.Seq, r.Type)
		}
	}

	target := filepath.Join(t.TempDir(), hikoutei.ReadModelFile)
	cp, err := hikoutei.Replay(t.Context(), dir, target, hikoutei.ReplayOptions{}, airportDef())
	wantUnknownAuditNote(t, "replay", err)
	if cp >= unknownSeq {
		t.Fatalf("replay reached checkpoint %d past the unknown record %d", cp, unknownSeq)
	}

	_, err = events.DecodeRecord(unknownSeq, raw[unknownSeq-1].Bytes)
	wantUnknownAuditNote(t, "DecodeRecord", err)
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	must(t, err)
	last := uint64(0)
	err = l.ReadFrom(1, func(e events.Event) error { last = e.Seq; return nil })
	must(t, l.Close())
	wantUnknownAuditNote(t, "ReadFrom", err)
	if last >= unknownSeq {
		t.Fatalf("ReadFrom delivered seq %d past the unknown record", last)
	}

	clock := events.NewManualClock(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	s, err := hikoutei.Open(t.Context(), copyStore(t, unknownLog), hikoutei.Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1}, airportDef())
	if err == nil {
		s.Close()
	}
	wantUnknownAuditNote(t, "open as a live store", err)
}

// A replay of the range before the unknown record reads it whole: the
// record after the range is never decoded into the result.
func TestReplayUpToBeforeAnUnknownRecordSucceeds(t *testing.T) {
	target := filepath.Join(t.TempDir(), hikoutei.ReadModelFile)
	cp, err := hikoutei.Replay(t.Context(), logDir(unknownLog), target, hikoutei.ReplayOptions{UpTo: unknownSeq - 1}, airportDef())
	if err != nil || cp != unknownSeq-1 {
		t.Fatalf("replay up to %d: checkpoint %d, %v", unknownSeq-1, cp, err)
	}
}
