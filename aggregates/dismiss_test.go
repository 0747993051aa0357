package aggregates

import (
	"errors"
	"strings"
	"testing"
)

// A quarantine record that cannot be dismissed says why in one line, by
// its id and without any cell value: cleared since (no longer active), no
// row, or a removed record. An active record queues the guarded rewrite.
func TestDismissOfAQuarantineRecordThatCannotBeDismissedSaysWhyWithoutCellValues(t *testing.T) {
	const secret = "secret-cell-value"
	vals := map[string]any{keyField: "GKA", "notes": secret}
	active := QuarantinedRow{ID: "q1", Entity: "Airport", Anchor: "GKA", RowHash: "h1", Active: true}
	cleared, noRow := active, active
	cleared.Active, noRow.Anchor = false, ""
	for _, tc := range []struct {
		name   string
		q      QuarantinedRow
		exists bool
		why    string
	}{
		{"cleared", cleared, true, "is no longer active"},
		{"no row", noRow, true, "names no row"},
		{"removed record", active, false, "record that was removed"},
	} {
		_, err := DecideDismiss(tc.q, vals, tc.exists, []string{keyField, "notes"})
		if !errors.Is(err, ErrQuarantineNotDismissable) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "quarantine_not_dismissable: quarantine record q1 ") || !strings.Contains(msg, tc.why) ||
			strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
			t.Fatalf("%s: message %q", tc.name, msg)
		}
	}
	q, err := DecideDismiss(active, vals, true, []string{keyField, "notes"})
	if err != nil || q.ExpectedHash != "h1" || q.Values["notes"] != secret {
		t.Fatalf("active record: %+v %v", q, err)
	}
}
