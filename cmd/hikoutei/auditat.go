package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// auditAtRequest is `audit --at`: one record's state at a point of the
// log and its history up to then.
type auditAtRequest struct {
	dir    string
	point  hikoutei.Point
	f      *auditFilter
	asJSON bool
}

// parseAt reads --at: a log sequence (digits) or an RFC 3339 time.
func parseAt(s string) (hikoutei.Point, error) {
	if seq, err := strconv.ParseUint(s, 10, 64); err == nil {
		return hikoutei.AtSeq(seq), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return hikoutei.Point{}, fmt.Errorf(`flag "--at": %q is neither a sequence nor an RFC 3339 time`, s)
	}
	return hikoutei.AtTime(t.Add(writtenPrecision(s) - 1)), nil
}

// writtenPrecision is the unit of the last digit of the RFC 3339 time s:
// a second without a fraction, a millisecond for three fractional digits.
// A time covers its whole unit, so a time copied from audit's output (which
// shows milliseconds) includes the events printed with it.
func writtenPrecision(s string) time.Duration {
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return time.Second
	}
	digits := 0
	for _, r := range s[i+1:] {
		if r < '0' || r > '9' {
			break
		}
		digits++
	}
	unit := time.Second
	for range min(digits, 9) {
		unit /= 10
	}
	return unit
}

// newAuditAt checks the flags of `audit --at` (all usage errors, exit 2)
// before anything touches the store.
func newAuditAt(dir string, mirror mirrorSource, repl replicatedSource, f *auditFilter, asOf, at string, asJSON bool) (auditAtRequest, error) {
	point, err := parseAt(at)
	switch {
	case err != nil:
		return auditAtRequest{}, usageError{err}
	case f.entity == "" || f.id == "":
		return auditAtRequest{}, usageError{errors.New("--at needs --entity and --id")}
	case dir == "" || mirror.url != "" || repl.store != "":
		return auditAtRequest{}, usageError{errors.New("--at reads a store directory: give --dir (not --nats or --store)")}
	case f.from > 0 || f.to > 0 || asOf != "":
		return auditAtRequest{}, usageError{errors.New("--at excludes --from, --to and --as-of")}
	}
	return auditAtRequest{dir: dir, point: point, f: f, asJSON: asJSON}, nil
}

// run prints the record's state and history from dir; while a process
// holds the store it reads a copy of the log that process writes through
// its administrative channel (then there are no snapshots: the state is
// replayed from the first record).
func (r auditAtRequest) run(ctx context.Context, stdout, stderr io.Writer) error {
	if err := requireStore(r.dir); err != nil {
		return err
	}
	if tempInStore != nil {
		return tempInStore // the view's read model is built in the temporary directory
	}
	err := r.print(ctx, stdout, r.dir, nil)
	if !errors.Is(err, events.ErrStoreLocked) {
		return err
	}
	if r.f.pv.reveal {
		return errRevealRunning(r.dir)
	}
	scratch, err2 := scratchDir("", "hikoutei-audit-")
	if err2 != nil {
		return err2
	}
	defer os.RemoveAll(scratch)
	var resp admin.BackupResponse
	handled, err2 := viaChannel(ctx, r.dir, admin.OpStoreBackup, admin.BackupRequest{Out: filepath.Join(scratch, events.LogFileName)}, &resp)
	switch {
	case !handled:
		return err
	case err2 != nil:
		return fmt.Errorf("the store is running and its copy failed: %w", err2)
	}
	fmt.Fprintf(stderr, "audit: the store is running: audited a copy of its log at head %d\n", resp.Head)
	return r.print(ctx, stdout, scratch, func() { os.RemoveAll(scratch) })
}

// print builds the view of dir at the point, reads the history up to its
// sequence, closes the view (its temporary read model is removed) and
// runs done (which removes a scratch copy of the log), then prints both:
// no copy is left to a command killed while it prints.
func (r auditAtRequest) print(ctx context.Context, w io.Writer, dir string, done func()) error {
	v, err := hikoutei.AsOfDir(ctx, dir, r.point)
	if err != nil {
		return err
	}
	defer v.Close()
	seq, at := v.Seq(), v.At()
	f := *r.f
	f.to = v.Seq()
	var history []events.Event
	if err := auditEvents(dir, &f, func(e events.Event) error { history = append(history, e); return nil }); err != nil {
		return err
	}
	state, err := v.RecordSealed(ctx, f.entity, f.id) // shown as printEvent shows them
	if errors.Is(err, hikoutei.ErrNotFound) || errors.Is(err, hikoutei.ErrUnregisteredType) {
		state, err = nil, nil // absent then (or its entity not declared now)
	}
	if state != nil && err == nil {
		err = f.pv.shownValues(state, f.entity)
	}
	if err != nil {
		return err
	}
	if err := v.Close(); err != nil {
		return err
	}
	if done != nil {
		done()
	}
	if err := r.printState(w, seq, at, state); err != nil {
		return err
	}
	for _, e := range history {
		if err := printEvent(w, e, r.asJSON, r.f.pv); err != nil {
			return err
		}
	}
	return nil
}

// printState prints the record's state at the view's sequence: a JSON
// line, or a line for people.
func (r auditAtRequest) printState(w io.Writer, seq uint64, at time.Time, state map[string]any) error {
	if r.asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"seq": seq, "at": at, "entity": r.f.entity, "id": r.f.id, "state": state})
	}
	shown := "absent"
	if state != nil {
		b, err := json.Marshal(state)
		if err != nil {
			return err
		}
		shown = escapeControls(string(b))
	}
	_, err := fmt.Fprintf(w, "%s %s as of seq %d (%s): %s\n", escapeControls(r.f.entity), escapeControls(r.f.id), seq, at.UTC().Format("2006-01-02T15:04:05.000Z"), shown)
	return err
}
