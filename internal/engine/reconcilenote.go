package engine

import "time"

// NoteReconcile records what a reconciliation pass found on one tab
// (placeholder until sync health lands).
func (e *Engine) NoteReconcile(spreadsheet, tab string, diverged int, at time.Time) {}
