package crash

import (
	"fmt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// commandRecord is an applied resolution command as the log shows it.
type commandRecord struct {
	conflict, commit string
	how              hikoutei.Resolution
	seq              uint64
}

// resolvedRecord is one conflict.resolved event.
type resolvedRecord struct {
	commit     string
	seq        uint64
	resolution events.Resolution
	actor      events.Actor
}

// noteRecord is a change of an Item's note in the log (removed: the Item
// was removed).
type noteRecord struct {
	commit  string
	seq     uint64
	value   any
	removed bool
}

// resolutionLedger is what the checker knows of resolutions: what the
// children reported (not yet verified) and what the log holds.
type resolutionLedger struct {
	reported []resolutionLine                 // not yet verified
	outcomes map[string]aggregates.AckOutcome // command id → first reported outcome
	// from the log
	applied   map[string]commandRecord         // command id → its applied event
	unapplied map[string]aggregates.AckOutcome // command id → stale or rejected
	resolved  map[string][]resolvedRecord      // conflict id → its conflict.resolved events
	noteAt    map[string]noteRecord            // commit + "/" + item id → the note it committed
	lastNote  map[string]noteRecord            // item id → the last change of its note
}

func newResolutionLedger() resolutionLedger {
	return resolutionLedger{outcomes: map[string]aggregates.AckOutcome{}, applied: map[string]commandRecord{},
		unapplied: map[string]aggregates.AckOutcome{}, resolved: map[string][]resolvedRecord{}, noteAt: map[string]noteRecord{},
		lastNote: map[string]noteRecord{}}
}

// resolution records a RESOLVED or UNAPPLIED line. A repeated command
// id must report its first outcome; only the first report is verified
// and counted.
func (k *checker) resolution(r resolutionLine) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if first, ok := k.ledger.outcomes[r.command]; ok {
		if first != r.outcome {
			k.c.problem(&k.c.res.Mismatches, "resolution command %s of %s returned %s, then %s when repeated", r.command, r.conflict,
				first, r.outcome)
		}
		return
	}
	k.ledger.outcomes[r.command] = r.outcome
	k.ledger.reported = append(k.ledger.reported, r)
	switch {
	case r.outcome != hikoutei.AckApplied:
		k.c.res.ResolutionsUnapplied++
	case r.how == hikoutei.UseSheet:
		k.c.res.ResolvedUseSheet++
		k.c.res.Acked++
	default:
		k.c.res.ResolvedKeepSystem++
		k.c.res.Acked++
	}
}

// logEvent indexes one log event for the resolution checks; a conflict
// resolved a second time is a duplicate.
func (k *checker) logEvent(run int, e events.Event) {
	l := &k.ledger
	switch p := e.Payload.(type) {
	case events.AckApplied:
		l.command(e, events.AckCommand(p), hikoutei.KeepSystem)
	case events.AcceptUserApplied:
		l.command(e, events.AckCommand(p), hikoutei.UseSheet)
	case events.AckStale, events.AckRejected, events.AcceptUserStale, events.AcceptUserRejected:
		l.unappliedCommand(e)
	case events.ConflictResolved:
		if prev := l.resolved[p.ConflictID]; len(prev) > 0 {
			k.c.problem(&k.c.res.Duplicates, "run %d: conflict %s resolved again (%s at seq %d, first %s at seq %d)", run, p.ConflictID,
				p.Resolution, e.Seq, prev[0].resolution, prev[0].seq)
		}
		l.resolved[p.ConflictID] = append(l.resolved[p.ConflictID], resolvedRecord{commit: e.Commit, seq: e.Seq,
			resolution: p.Resolution, actor: p.Actor})
	case events.EntityPersisted:
		if v, ok := p.Fields["note"]; ok && p.Entity == "Item" {
			n := noteRecord{commit: e.Commit, seq: e.Seq, value: v}
			l.noteAt[e.Commit+"/"+p.ID], l.lastNote[p.ID] = n, n
		}
	case events.EntityRemoved:
		if p.Entity == "Item" {
			l.lastNote[p.ID] = noteRecord{commit: e.Commit, seq: e.Seq, removed: true}
		}
	}
}

func (l *resolutionLedger) command(e events.Event, p events.AckCommand, how hikoutei.Resolution) {
	if p.CommandID != "" {
		l.applied[p.CommandID] = commandRecord{conflict: p.ConflictID, commit: e.Commit, how: how, seq: e.Seq}
	}
}

func (l *resolutionLedger) unappliedCommand(e events.Event) {
	var p events.AckCommand
	outcome := aggregates.AckStale
	switch x := e.Payload.(type) {
	case events.AckStale:
		p = events.AckCommand(x)
	case events.AcceptUserStale:
		p = events.AckCommand(x)
	case events.AckRejected:
		p, outcome = events.AckCommand(x), aggregates.AckRejected
	case events.AcceptUserRejected:
		p, outcome = events.AckCommand(x), aggregates.AckRejected
	}
	if p.CommandID != "" {
		l.unapplied[p.CommandID] = outcome
	}
}

// verifyResolutions checks every reported resolution against the log and
// the read model's notes (items: id → note after the reopen):
//   - an applied one: its applied command event and the conflict's
//     conflict.resolved (the right resolution and actor) in one commit;
//     use_sheet: that commit committed the listed sheet value as the note,
//     and the read model still shows it unless a later commit changed the
//     note or removed the item; keep_system: that commit changed no note;
//   - a stale or rejected one: recorded as such, never applied.
func (k *checker) verifyResolutions(run int, items map[string]string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, r := range k.ledger.reported {
		if r.outcome == hikoutei.AckApplied {
			k.verifyApplied(run, r, items)
		} else {
			k.verifyUnapplied(run, r)
		}
	}
	k.ledger.reported = k.ledger.reported[:0]
}

func (k *checker) verifyApplied(run int, r resolutionLine, items map[string]string) {
	cmd, ok := k.ledger.applied[r.command]
	if !ok {
		k.c.problem(&k.c.res.Lost, "run %d: acknowledged %s of conflict %s (command %s) is not in the log", run, r.how, r.conflict, r.command)
		return
	}
	if cmd.conflict != r.conflict || cmd.how != r.how {
		k.c.problem(&k.c.res.Mismatches, "run %d: command %s is %s of %s in the log, acknowledged as %s of %s", run, r.command,
			cmd.how, cmd.conflict, r.how, r.conflict)
		return
	}
	if !k.resolvedBy(run, r, cmd) {
		return
	}
	note, changed := k.ledger.noteAt[cmd.commit+"/"+r.entity]
	if r.how == hikoutei.KeepSystem {
		if changed {
			k.c.problem(&k.c.res.Mismatches, "run %d: keep_system %s of %s changed the note", run, r.command, r.conflict)
		}
		return
	}
	if changed && aggregates.Render(note.value) != r.value {
		k.c.problem(&k.c.res.Mismatches, "run %d: use_sheet %s of %s committed another value than the sheet's", run, r.command, r.conflict)
		return
	}
	k.verifyNote(run, r, cmd, items)
}

// resolvedBy checks that the applied command's commit resolved its
// conflict as asked, by the actor given.
func (k *checker) resolvedBy(run int, r resolutionLine, cmd commandRecord) bool {
	want := events.ResolutionAcknowledged
	if r.how == hikoutei.UseSheet {
		want = events.ResolutionUseSheet
	}
	for _, rr := range k.ledger.resolved[r.conflict] {
		if rr.commit != cmd.commit {
			continue
		}
		if rr.resolution != want || rr.actor != r.actor {
			k.c.problem(&k.c.res.Mismatches, "run %d: %s of %s recorded %s %s by %q, want %s by %q", run, r.command,
				r.conflict, events.TypeConflictResolved, rr.resolution, rr.actor, want, r.actor)
			return false
		}
		return true
	}
	k.c.problem(&k.c.res.Lost, "run %d: acknowledged %s of %s (command %s) has no %s in its commit", run, r.how,
		r.conflict, r.command, events.TypeConflictResolved)
	return false
}

// verifyNote: the read model shows a use_sheet value unless a later
// commit changed the note or removed the item.
func (k *checker) verifyNote(run int, r resolutionLine, cmd commandRecord, items map[string]string) {
	last := k.ledger.lastNote[r.entity]
	if last.commit != cmd.commit && last.seq > cmd.seq {
		return // a later commit changed the note or removed the item
	}
	got, ok := items[r.entity]
	switch {
	case !ok:
		k.c.problem(&k.c.res.Lost, "run %d: item of use_sheet %s (conflict %s) is missing from the read model", run, r.command, r.conflict)
	case got != r.value:
		k.c.problem(&k.c.res.Mismatches, "run %d: the note of use_sheet %s (conflict %s) is not the sheet's value in the read model",
			run, r.command, r.conflict)
	}
}

func (k *checker) verifyUnapplied(run int, r resolutionLine) {
	if _, ok := k.ledger.applied[r.command]; ok {
		k.c.problem(&k.c.res.Mismatches, "run %d: %s %s of %s returned %s but is applied in the log", run, r.how, r.command, r.conflict,
			r.outcome)
		return
	}
	if got, ok := k.ledger.unapplied[r.command]; !ok || got != r.outcome {
		k.c.problem(&k.c.res.Lost, "run %d: %s outcome of %s %s (conflict %s) is not recorded in the log (found %q)", run, r.outcome,
			r.how, r.command, r.conflict, fmt.Sprint(got))
	}
}
