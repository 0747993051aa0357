package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/echo"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
	"github.com/hikoutei/hikoutei-go/segstore"
)

type auditFilter struct {
	entity, id string
	from, to   uint64
	asOf       time.Time
	// related collects the effect, conflict and candidate ids of matched
	// events, so their later transitions (applied, resolved, cleared) match
	// too even though they no longer name the entity.
	related map[string]bool
	// segs is where the store's sealed segments live (--segments; nil:
	// the folder beside the log read).
	segs segstore.Store
	// erasures keeps only the subject.erased events (--erasures).
	erasures bool
	// pv shows personal values: a marker, or opened (--reveal-personal).
	pv *personalView
}

// relatedKeys are the payload keys whose values tie events together.
var relatedKeys = []string{"effect_id", "conflict_id", "candidate_id", "by"}

func (f *auditFilter) keep(e events.Event) bool {
	if f.to > 0 && e.Seq > f.to || e.Seq < f.from || !f.asOf.IsZero() && e.At.After(f.asOf) {
		return false
	}
	if f.erasures {
		return e.Stream == events.ErasureStream
	}
	if f.entity == "" {
		return true
	}
	if b, ok := e.Payload.(events.Batch); ok {
		return f.keepBatch(b)
	}
	p, _ := events.EncodePayload(e.Payload)
	ent, _ := p["entity"].(string)
	id, _ := p["id"].(string)
	if ent == f.entity && (f.id == "" || id == f.id) || f.isRelated(p) {
		f.relate(p)
		return true
	}
	return false
}

// keepBatch keeps a batch settle event when one of its effects is related.
func (f *auditFilter) keepBatch(b events.Batch) bool {
	for _, pl := range b.Each() {
		if p, _ := events.EncodePayload(pl); f.isRelated(p) {
			return true
		}
	}
	return false
}

func (f *auditFilter) isRelated(p map[string]any) bool {
	for _, k := range relatedKeys {
		if v, ok := p[k].(string); ok && f.related[v] {
			return true
		}
	}
	return false
}

func (f *auditFilter) relate(p map[string]any) {
	if f.related == nil {
		f.related = map[string]bool{}
	}
	for _, k := range relatedKeys {
		if v, ok := p[k].(string); ok && v != "" {
			f.related[v] = true
		}
	}
}

// mirrorSource says where and how audit reads a JetStream mirror.
type mirrorSource struct {
	url, stream, nkey, key string
}

func newAuditCmd() *cobra.Command {
	var dir, asOf, at, segments string
	var src mirrorSource
	var repl replicatedSource
	f := auditFilter{pv: &personalView{}}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "audit (--dir DIR | --nats URL --stream S [--nats-nkey FILE] [--mirror-key KEY] | --nats URL --store NAME [--nats-nkey FILE]) [--entity E [--id ID]] [--from N] [--to M] [--as-of TIME | --at SEQ|TIME] [--segments URL] [--json]",
		Short: "Print the log's events: of one entity, a range of sequences, or as of a time",
		Long: `audit prints events human-readably (or as JSON lines): sequence, time, type,
stream, writer epoch and payload. It reads log.db; while a process holds
the store, it audits a consistent copy that process writes through its
administrative channel (as 'hikoutei backup' does) and says on stderr at
which head. In replicated mode --store NAME reads the store's replicated
log stream on the cluster --nats URL (default HIKOUTEI_NATS_URL) into a
temporary log and audits that, never touching the running store. It also
reads the JetStream mirror of a store on another machine (--nats URL
--stream S). From a mirror every record's checksum,
signature and sequence are verified: a forged, duplicated or out-of-order
record fails the audit, naming its sequence. --mirror-key pins the store's
mirror key (logged by the store as "nats mirror" key=N…); without it the key
of the first record is trusted and printed on stderr. --nats-nkey is the
nkey seed to authenticate with (e.g. the store's DIR/nats-client.nk).
Personal values (docs/erasure.md) show as ` + personalMarker + `, or ` + hikoutei.Erased + ` once their
subject was erased, never as their sealed text; --reveal-personal shows them
opened with DIR/keys.db (read-only; the store must be closed). --erasures
prints only the ` + string(events.TypeSubjectErased) + ` events: each erased subject by its keyed
digest, when, by which actor, the key generation destroyed.
--entity/--id also match the effects and inbound events of that entity.
--at SEQ|TIME (with --dir, --entity and --id) prints the record's state
at that log sequence, or at the last sequence recorded at or before that
RFC 3339 time, then its history up to it. Sealed events are read from
DIR/segments, or from the store --segments names.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if f.segs, err = openSegmentsFlag(cmd.Context(), segments, dir); err != nil {
				return err
			}
			defer closeSegments(f.segs)
			f.pv.keysDir, f.pv.stderr = dir, cmd.ErrOrStderr()
			defer f.pv.close()
			if err := checkPersonalFlags(dir, src, repl, &f); err != nil {
				return err
			}
			if at != "" || cmd.Flags().Changed("at") {
				r, err := newAuditAt(dir, src, repl, &f, asOf, at, asJSON)
				if err != nil {
					return err
				}
				return r.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if err := checkAuditSources(dir, src, &repl); err != nil {
				return err
			}
			if asOf != "" {
				t, err := time.Parse(time.RFC3339Nano, asOf)
				if err != nil {
					return usageError{fmt.Errorf("--as-of %q is not an RFC 3339 time (e.g. 2026-12-01T09:00:00Z)", asOf)}
				}
				f.asOf = t
			}
			print := func(e events.Event) error { return printEvent(cmd.OutOrStdout(), e, asJSON, f.pv) }
			if f.id != "" && f.entity == "" {
				return usageError{fmt.Errorf("--id needs --entity")}
			}
			if f.to > 0 && f.to < f.from {
				return usageError{fmt.Errorf("--to %d is before --from %d", f.to, f.from)}
			}
			switch {
			case repl.store != "":
				return auditReplicated(cmd.Context(), cmd.ErrOrStderr(), repl, &f, print)
			case src.url != "":
				return auditMirror(cmd.ErrOrStderr(), src, &f, print)
			}
			return auditStore(cmd.Context(), cmd.ErrOrStderr(), dir, &f, print)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&src.url, "nats", "", "NATS URL of a JetStream mirror")
	cmd.Flags().StringVar(&src.stream, "stream", "", "mirror stream name (e.g. HIKOUTEI_MYSTORE)")
	cmd.Flags().StringVar(&repl.store, "store", "", "replicated store name whose replicated log stream to audit (replicated mode)")
	cmd.Flags().StringVar(&src.nkey, "nats-nkey", "", "nkey user seed file to authenticate with (e.g. a store's nats-client.nk)")
	cmd.Flags().StringVar(&src.key, "mirror-key", "", "the store's public mirror key (N…) every record must be signed with")
	cmd.Flags().StringVar(&f.entity, "entity", "", "only events of this entity type (one the log declares)")
	cmd.Flags().StringVar(&f.id, "id", "", "only events of this entity id (with --entity)")
	cmd.Flags().Uint64Var(&f.from, "from", 0, "first sequence")
	cmd.Flags().Uint64Var(&f.to, "to", 0, "last sequence")
	cmd.Flags().StringVar(&asOf, "as-of", "", "only events at or before this RFC 3339 time")
	cmd.Flags().BoolVar(&f.pv.reveal, "reveal-personal", false, "show personal values opened with DIR/keys.db (the store closed) instead of "+personalMarker)
	cmd.Flags().BoolVar(&f.erasures, "erasures", false, "only the "+string(events.TypeSubjectErased)+" events: which subjects (by keyed digest) were erased, when, by whom")
	cmd.Flags().StringVar(&at, "at", "", "with --entity and --id: the record's state at this sequence or RFC 3339 time, then its history up to it")
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeLines)
	cmd.AddCommand(newAuditVerifyCmd())
	return cmd
}

// auditMirror prints the verified events of a mirror stream and says on
// stderr which key vouched for them.
func auditMirror(stderr io.Writer, src mirrorSource, f *auditFilter, fn func(events.Event) error) error {
	cfg := natsbus.Config{URL: src.url, NkeyFile: src.nkey, Mirror: natsbus.MirrorConfig{VerifyKey: src.key}}
	if err := f.pv.loadMirror(func(note func(events.Event) error) error {
		_, err := natsbus.ReadMirrorReport(context.Background(), cfg, src.stream, note)
		return err
	}); err != nil {
		return err
	}
	rep, err := natsbus.ReadMirrorReport(context.Background(), cfg, src.stream, f.filter(fn))
	if rep.Signer != "" && !rep.Pinned {
		fmt.Fprintf(stderr, "audit: records signed by mirror key %s (not pinned: pass --mirror-key to require it)\n", rep.Signer)
	}
	if err == nil && rep.ChainSeq > 0 {
		fmt.Fprintf(stderr, "audit: hash chain verified up to head %d:%s\n", rep.ChainSeq, rep.Chain)
	}
	return err
}

// filter wraps fn so that it sees only the events f keeps.
func (f *auditFilter) filter(fn func(events.Event) error) func(events.Event) error {
	return func(e events.Event) error {
		if !f.keep(e) {
			return nil
		}
		return fn(e)
	}
}

func auditEvents(dir string, f *auditFilter, fn func(events.Event) error) error {
	return auditEventsThen(dir, f, nil, fn)
}

// auditEventsThen is auditEvents running opened once dir's log is open
// and before the first event: a scratch copy is removed there, so it is
// gone before anything is printed (the open file stays readable).
func auditEventsThen(dir string, f *auditFilter, opened func(), fn func(events.Event) error) error {
	keep := f.filter(fn)
	if _, err := os.Stat(filepath.Join(dir, events.LogFileName)); err != nil {
		return fmt.Errorf("%w: %s has no %s", hikoutei.ErrNotAStore, dir, events.LogFileName)
	}
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, Segments: f.segs})
	if err != nil {
		return events.DescribeLocked(dir, err)
	}
	defer l.Close()
	if opened != nil {
		opened()
	}
	if err := f.pv.load(l); err != nil {
		return err
	}
	if err := checkEntity(l, f.entity); err != nil {
		return err
	}
	err = l.ReadFrom(max(f.from, 1), func(e events.Event) error {
		if f.to > 0 && e.Seq > f.to {
			return errPastRange
		}
		return keep(e)
	})
	if errors.Is(err, errPastRange) || f.to > 0 && failsAfter(err, f.to) {
		return nil // the range ended before a record that cannot be read
	}
	return err
}

var errPastRange = errors.New("past the requested range")

// checkEntity refuses (exit 2) an --entity the log never declared: a
// typo would otherwise print nothing and exit 0.
func checkEntity(l *events.Log, entity string) error {
	if entity == "" {
		return nil
	}
	names := map[string]bool{}
	err := l.ReadStream(events.SchemaStream, 1, func(e events.Event) error {
		if d, ok := e.Payload.(events.SchemaDeclared); ok {
			for _, s := range d.Entities {
				names[s.Name] = true
			}
		}
		return nil
	})
	if err != nil || names[entity] {
		return err
	}
	known := slices.Sorted(maps.Keys(names))
	return usageError{fmt.Errorf(`flag "--entity": the log declares no entity %s (it declares: %s)`, echo.Quote(entity), strings.Join(known, ", "))}
}

// failsAfter reports whether err is the failure of a record after seq.
func failsAfter(err error, seq uint64) bool {
	var pe *events.PayloadError
	var ce *events.CorruptRecordError
	return errors.As(err, &pe) && pe.Seq > seq || errors.As(err, &ce) && ce.Seq > seq
}

func printEvent(w io.Writer, e events.Event, asJSON bool, pv *personalView) error {
	p, err := shownPayload(e.Payload)
	if err == nil {
		err = pv.shownValues(p, "")
	}
	if err != nil {
		return fmt.Errorf("seq %d: %w", e.Seq, err)
	}
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"seq": e.Seq, "at": e.At, "type": e.Type(), "stream": e.Stream,
			"version": e.Version, "epoch": e.Epoch, "commit": e.Commit, "payload": p})
	}
	payload, _ := json.Marshal(p)
	_, err = fmt.Fprintf(w, "%8d  %s  %-26s %s v%d epoch %d  %s\n", e.Seq, e.At.UTC().Format("2006-01-02T15:04:05.000Z"),
		e.Type(), shown(e.Stream), e.Version, e.Epoch, escapeControls(strings.TrimSpace(string(payload))))
	return err
}

// shownPayload is the payload as an auditor reads it: an effect.queued
// whose record refers to its entity.persisted for its values (values_of)
// shows the values the read filled in, beside the reference.
func shownPayload(pl events.Payload) (map[string]any, error) {
	q, ok := pl.(events.EffectQueued)
	if !ok || q.ValuesOf == 0 || q.Values == nil {
		return events.EncodePayload(pl)
	}
	ref := q.ValuesOf
	q.ValuesOf = 0
	p, err := events.EncodePayload(q)
	if err == nil {
		p["values_of"] = int64(ref)
	}
	return p, err
}
