package crash

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
)

// Lines a child writes for Store.ResolveConflict (one write each, like
// the others):
//
//	RESOLVED <conflict_id> <resolution> <command_id> <actor> <entity_id> <"sheet value">
//	    the command returned applied; the value is the candidate the fence named
//	UNAPPLIED <conflict_id> <resolution> <command_id> <outcome>
//	    the command returned stale or rejected (a correct outcome: the
//	    conflict moved on, or another command resolved it first)
//
// A command is sometimes repeated at once with the same command id: the
// repeat prints its outcome again, which must be the first one.
const (
	lineResolved  = "RESOLVED"
	lineUnapplied = "UNAPPLIED"
)

// resolutionActors take turns as the recorded resolver.
var resolutionActors = []hikoutei.Actor{hikoutei.ActorApplication, hikoutei.ActorCLI, hikoutei.ActorSheet}

// resolve resolves a random open conflict with KeepSystem or UseSheet
// (seeded), fenced by what the listing showed (KeepSystem now and then
// unfenced: the store reads the fence itself), with a command id of its
// own and a seeded actor.
func (w *worker) resolve(ctx context.Context, rng *rand.Rand, g int) error {
	open, err := w.s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil || len(open) == 0 {
		return err
	}
	c := open[rng.IntN(len(open))]
	how := hikoutei.KeepSystem
	if rng.IntN(2) == 0 {
		how = hikoutei.UseSheet
	}
	actor := resolutionActors[rng.IntN(len(resolutionActors))]
	cmdID := w.commandID(g)
	opts := []hikoutei.ResolveOption{hikoutei.WithCommandID(cmdID), hikoutei.WithActor(actor)}
	if how == hikoutei.UseSheet || rng.IntN(3) != 0 {
		// UseSheet always fenced: the value it commits is then the listed one.
		opts = append(opts, hikoutei.WithFence(c.CanonicalRevision, c.CandidateHash, c.CandidateEpoch))
	}
	for again := true; again; again = rng.IntN(4) == 0 { // a repeat must return the first outcome
		if err := w.resolveOnce(ctx, c, how, cmdID, actor, opts); err != nil {
			return err
		}
	}
	return nil
}

// resolveOnce runs one ResolveConflict and prints its outcome.
func (w *worker) resolveOnce(ctx context.Context, c hikoutei.Conflict, how hikoutei.Resolution, cmdID string, actor hikoutei.Actor,
	opts []hikoutei.ResolveOption) error {
	res, err := w.s.ResolveConflict(ctx, c.ID, how, opts...)
	switch {
	case err == nil && res.Outcome == hikoutei.AckApplied:
		w.say(fmt.Sprintf("%s %s %s %s %s %s %s\n", lineResolved, c.ID, how, cmdID, actor, c.EntityID, strconv.Quote(c.SheetValue)))
	case unapplied(err) && (res.Outcome == hikoutei.AckStale || res.Outcome == hikoutei.AckRejected):
		w.say(fmt.Sprintf("%s %s %s %s %s\n", lineUnapplied, c.ID, how, cmdID, res.Outcome))
	case errors.Is(err, hikoutei.ErrConflictNotFound):
		return nil
	case err != nil:
		return err
	default:
		return fmt.Errorf("resolve %s: no error and outcome %q", c.ID, res.Outcome)
	}
	return nil
}

// unapplied reports the typed errors of a resolution that changed nothing.
func unapplied(err error) bool {
	return errors.Is(err, hikoutei.ErrConflictStale) || errors.Is(err, hikoutei.ErrConflictNotOpen) ||
		errors.Is(err, hikoutei.ErrConflictBlocked)
}

func (w *worker) commandID(g int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cmds++
	return fmt.Sprintf("crash-r%03d-g%d-%04d", w.run, g, w.cmds)
}

// resolutionLine is a RESOLVED or UNAPPLIED line as the campaign parsed it.
type resolutionLine struct {
	conflict, command, entity, value string
	how                              hikoutei.Resolution
	actor                            hikoutei.Actor
	outcome                          aggregates.AckOutcome
}

// parseResolution parses a RESOLVED or UNAPPLIED line (ok false: malformed).
func parseResolution(line string) (resolutionLine, bool) {
	f := strings.Fields(line)
	switch {
	case len(f) == 5 && f[0] == lineUnapplied:
		return resolutionLine{conflict: f[1], how: hikoutei.Resolution(f[2]), command: f[3], outcome: aggregates.AckOutcome(f[4])}, true
	case len(f) >= 7 && f[0] == lineResolved:
		i := strings.IndexByte(line, '"')
		if i < 0 {
			return resolutionLine{}, false
		}
		v, err := strconv.Unquote(line[i:])
		if err != nil {
			return resolutionLine{}, false
		}
		return resolutionLine{conflict: f[1], how: hikoutei.Resolution(f[2]), command: f[3], actor: hikoutei.Actor(f[4]),
			entity: f[5], value: v, outcome: hikoutei.AckApplied}, true
	}
	return resolutionLine{}, false
}
