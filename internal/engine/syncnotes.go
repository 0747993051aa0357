package engine

import (
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// syncNotes are what the sync workers tell health in memory: the
// reconciliation passes' findings (each target keeps its provisioning's,
// syncState.provisioning). Its mutex
// is held for map and field copies only, never across I/O.
type syncNotes struct {
	mu        sync.Mutex
	reconcile map[string]map[string]reconcileNote // sync target → tab → last pass
	// headAhead: the last dispatch that read the authority's chain_head
	// cell found a head past the log's (nil: it did not).
	headAhead *SyncWarning
	// failedPasses counts, by sync target, the reconciliation passes
	// failed in a row (0 once a pass succeeds).
	failedPasses map[string]int
}

// noteReconcile records one pass: a divergence keeps the time it was
// first found until a pass finds none.
func (n *syncNotes) noteReconcile(sheet, tab string, diverged int, at time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	prev := n.tabNotes(sheet)[tab]
	note := reconcileNote{diverged: max(diverged, 0), at: at, compared: true} // a tab read is no longer blocked
	switch {
	case note.diverged > 0 && prev.diverged > 0:
		note.since = prev.since
	case note.diverged > 0:
		note.since = at
	}
	n.reconcile[sheet][tab] = note
}

// notePass records how a reconciliation pass of sheet ended.
func (n *syncNotes) notePass(sheet string, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failedPasses == nil {
		n.failedPasses = map[string]int{}
	}
	if err == nil {
		delete(n.failedPasses, sheet)
		return
	}
	n.failedPasses[sheet]++
}

// passesFailed is how many reconciliation passes of sheet failed in a
// row, up to now.
func (n *syncNotes) passesFailed(sheet string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.failedPasses[sheet]
}

// headWarningTTL is how long the chain_head_ahead warning stays after the
// last dispatch that found the cell past the log's head: the dispatch
// rewrites the cell at once, so a warning cleared by the next dispatch
// would hardly be seen.
const headWarningTTL = time.Hour

// noteHead records what the chain_head cell showed a dispatch that
// published head: a head past it is a warning for headWarningTTL after
// the last dispatch that found one.
func (n *syncNotes) noteHead(shown, head sheetsio.ChainHead, at time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if shown.Seq <= head.Seq {
		return
	}
	since := at
	if n.headAhead != nil {
		since = n.headAhead.Since
	}
	n.headAhead = &SyncWarning{Reason: ReasonChainHeadAhead, Since: since, At: at,
		Detail: fmt.Sprintf("the spreadsheet's chain_head cell showed seq %d, past the log head %d: no head of this log (someone typed it); "+
			"the dispatch rewrote it with %d", shown.Seq, head.Seq, head.Seq)}
}

// warnings copies the standing warnings at now.
func (n *syncNotes) warnings(now time.Time) []SyncWarning {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.headAhead == nil || now.Sub(n.headAhead.At) > headWarningTTL {
		return nil
	}
	return []SyncWarning{*n.headAhead}
}

// reconciled copies the notes of one sync target, by tab.
func (n *syncNotes) reconciled(sheet string) map[string]reconcileNote {
	n.mu.Lock()
	defer n.mu.Unlock()
	return maps.Clone(n.reconcile[sheet])
}

// noteMigrated records the rows of tab a layout migration read that
// differ from canonical state, not held by people (conflict, candidate,
// quarantine) nor in transition: health reports them diverged until a
// reconciliation pass counts the tab again (it keeps the time of the
// last pass). A migration that found none changes nothing.
func (n *syncNotes) noteMigrated(sheet, tab string, diverged int, at time.Time) {
	if diverged <= 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	note := n.tabNotes(sheet)[tab]
	if note.diverged == 0 {
		note.since = at
	}
	note.diverged = max(note.diverged, diverged)
	n.reconcile[sheet][tab] = note
}

// noteBlocked records that a pass could not read tab (its header drifted):
// health reports the tab blocked for reason until a pass reads it again.
func (n *syncNotes) noteBlocked(sheet, tab string, reason SyncReason, at time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	note := n.tabNotes(sheet)[tab]
	note.blocked, note.at = reason, at
	n.reconcile[sheet][tab] = note
}

// noteRecreated records that provisioning created tab again after it had
// shown the store's rows (it was deleted while the store was down):
// health reports it blocked with ReasonTabMissing until a reconciliation
// pass, which refills it, reads it (noteReconcile starts a new note).
func (n *syncNotes) noteRecreated(sheet, tab string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	note := n.tabNotes(sheet)[tab]
	note.recreated = ReasonTabMissing
	n.reconcile[sheet][tab] = note
}

// notePolled records what a poll's read of tab found: reason when it
// could not read the tab (it is missing), "" when it could. Health
// reports the tab blocked for reason until a poll or a reconciliation
// pass reads the tab.
func (n *syncNotes) notePolled(sheet, tab string, reason SyncReason) {
	n.mu.Lock()
	defer n.mu.Unlock()
	note := n.tabNotes(sheet)[tab]
	if note.polled == reason { // a tab read as before: no note made
		return
	}
	note.polled = reason
	n.reconcile[sheet][tab] = note
}

// tabNotes is the notes map of one sync target, created on first use
// (n.mu held).
func (n *syncNotes) tabNotes(sheet string) map[string]reconcileNote {
	if n.reconcile == nil {
		n.reconcile = map[string]map[string]reconcileNote{}
	}
	if n.reconcile[sheet] == nil {
		n.reconcile[sheet] = map[string]reconcileNote{}
	}
	return n.reconcile[sheet]
}
