package engine_test

import (
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// listedActive is what `hikoutei quarantine list` (active records, the
// default) lists for anchor on the Part Input tab.
func listedActive(t *testing.T, x *synced, anchor string) []projector.QuarantineEntry {
	t.Helper()
	var out []projector.QuarantineEntry
	x.readModel(func(p *projector.Projector) error {
		rows, _, err := projector.ListQuarantine(p.Conn(), projector.QuarantineFilter{Tab: partInput})
		for _, r := range rows {
			if r.Anchor == anchor {
				out = append(out, r)
			}
		}
		return err
	})
	return out
}

// quarantinedWithNote quarantines the qty cell of anchor with bad (typed
// by a person; a formula when it starts with "=") and checks the record
// and the note.
func quarantinedWithNote(t *testing.T, x *synced, anchor, bad string) {
	t.Helper()
	if strings.HasPrefix(bad, "=") {
		mustT(t, x.sheet.Person().TypeFormula(partInput, x.cellRef(partInput, anchor, "qty"), bad))
	} else {
		x.typeIn(anchor, "qty", bad)
	}
	x.poll()
	x.drain()
	x.pass()
	if len(listedActive(t, x, anchor)) != 1 || !strings.Contains(x.noteAt(anchor, "qty"), "not imported") {
		t.Fatalf("%q not quarantined with a note: %v, note %q", bad, listedActive(t, x, anchor), x.noteAt(anchor, "qty"))
	}
}

// Issue 17 item 4: where the value can be read under the column's type
// after a person fixes it, the next poll accepts it as any Input edit; the
// quarantine record clears (no longer listed as active) and the note goes.
func TestAQuarantinedCellAPersonFixesIsAcceptedOnTheNextPollItsRecordClearsAndItsNoteGoes(t *testing.T) {
	t.Parallel()
	for name, bad := range map[string]string{"text in a number column": "lots", "a formula": "=3*3"} {
		t.Run(name, func(t *testing.T) {
			x := openInbound(t, t.TempDir(), nil)
			seedParts(t, x, 3)
			quarantinedWithNote(t, x, "2", bad)
			before := x.head()
			x.typeIn("2", "qty", "7") // the person fixes the cell
			x.poll()
			if types := x.eventTypes(before); types[events.TypeObservationAccepted] != 1 || types[events.TypeConflictOpened] != 0 {
				t.Fatalf("the fix appended %v", types)
			}
			if p := x.part("2"); p.Qty != 7 {
				t.Fatalf("the fix was not accepted: %+v", p)
			}
			if q := listedActive(t, x, "2"); len(q) != 0 {
				t.Fatalf("quarantine list still lists %+v", q)
			}
			x.drain()
			x.pass()
			if note := x.noteAt("2", "qty"); note != "" {
				t.Fatalf("the note outlived the fix: %q", note)
			}
		})
	}
}

// A fix is an ordinary edit: when the system changed the field while the
// cell was quarantined, the fixed value opens a conflict (the system's
// value stays), the quarantine clears and the note becomes the conflict's.
func TestAQuarantinedCellFixedAfterTheSystemChangedTheFieldOpensAConflict(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	quarantinedWithNote(t, x, "2", "lots")
	p := x.part("2")
	p.Qty = 8
	commit(t, x.Store, p)
	x.drain()
	x.typeIn("2", "qty", "9")
	x.poll()
	open, err := x.Conflicts(ctx, hikoutei.ConflictOpen)
	mustT(t, err)
	if len(open) != 1 || open[0].Anchor != "2" || x.part("2").Qty != 8 {
		t.Fatalf("open conflicts %+v, part %+v", open, x.part("2"))
	}
	if q := listedActive(t, x, "2"); len(q) != 0 {
		t.Fatalf("quarantine list still lists %+v", q)
	}
	x.drain()
	x.pass()
	if note := x.noteAt("2", "qty"); !strings.Contains(note, "conflict: kept 8") {
		t.Fatalf("note %q", note)
	}
}
