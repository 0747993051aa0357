package natsbus

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ConflictSchemaVersion is the value of ConflictNotification.Schema written
// by this package. A subscriber must ignore messages with a schema it does
// not know; SubscribeConflicts delivers this schema only. Schema 2 (issue
// 17) names resolutions system_wins | keep_system | use_sheet (schema 1
// said system_acknowledged for keep_system) and adds actor.
const ConflictSchemaVersion = 2

// Resolutions (ConflictNotification.Resolution) and actors
// (ConflictNotification.Actor) of schema 2.
const (
	ResolutionSystemWins = "system_wins" // a later application commit raised the field's revision
	ResolutionKeepSystem = "keep_system" // a person kept the system's value (acknowledge_system)
	ResolutionUseSheet   = "use_sheet"   // a person used the sheet's value (accept_user)
	ActorApplication     = "application"
	ActorCLI             = "cli"
	ActorSheet           = "sheet"
)

// Conflict notification kinds (ConflictNotification.Kind); equal to the
// subject suffix the notification is published on.
const (
	KindConflictOpened   = SuffixConflictOpened   // "conflict.opened"
	KindConflictResolved = SuffixConflictResolved // "conflict.resolved"
)

// ConflictNotification is the JSON body of "hikoutei.<store>.conflict.opened"
// and "hikoutei.<store>.conflict.resolved" (schema 2). It tells subscribers
// that a User_Input edit conflicted with the canonical value of a field
// (opened), or that such a conflict was settled (resolved). It is a
// notification, not the record: the log and the read model's hk_conflicts
// table stay authoritative, and a subscriber may miss messages (NATS core,
// at most once).
//
// Schema 2 (UTF-8 JSON object, one per message; unknown keys may be added
// within schema 2 and must be ignored):
//
//	key                 type     presence  meaning
//	schema              integer  always    2
//	kind                string   always    "conflict.opened" | "conflict.resolved" (= subject suffix)
//	store               string   always    store name (the <store> subject token)
//	conflict_id         string   always    conflict id (stable; stream "conflict/<id>")
//	entity              string   always    entity type name, e.g. "Airport"
//	id                  string   always    entity id, e.g. "LAX"
//	field               string   always    conflicted field name
//	canonical_revision  integer  always    canonical revision of the field the conflict is fenced by
//	candidate_epoch     integer  always    candidate epoch of the field (bumped on each resolution)
//	resolution          string   resolved  how it was settled: "system_wins" | "keep_system" | "use_sheet"
//	actor               string   resolved  who settled it: "application" | "cli" | "sheet" (omitted when
//	                                       the log recorded none: resolutions made before schema 2)
//	at                  string   always    RFC 3339 UTC timestamp of the decision, e.g. "2026-11-30T02:34:22.123456789Z"
//	candidate_value     any      optional  the human-entered value; only when the publisher runs
//	                                       with IncludeValues (values may be personal data)
//	canonical_value     any      optional  the canonical (system) value; same rule
//
// Values are JSON renderings of canonical values: strings, numbers (integers
// beyond ±2^53 may lose precision in JavaScript), booleans, RFC 3339 times
// as strings, arrays, objects; a null value is omitted.
//
// Example:
//
//	{"schema":2,"kind":"conflict.opened","store":"demo","conflict_id":"c-01","entity":"Airport",
//	 "id":"LAX","field":"name","canonical_revision":7,"candidate_epoch":2,"at":"2026-11-30T02:34:22Z"}
type ConflictNotification struct {
	Schema            int       `json:"schema"`
	Kind              string    `json:"kind"`
	Store             string    `json:"store"`
	ConflictID        string    `json:"conflict_id"`
	Entity            string    `json:"entity"`
	ID                string    `json:"id"`
	Field             string    `json:"field"`
	CanonicalRevision uint64    `json:"canonical_revision"`
	CandidateEpoch    uint64    `json:"candidate_epoch"`
	Resolution        string    `json:"resolution,omitempty"`
	Actor             string    `json:"actor,omitempty"`
	At                time.Time `json:"at"`
	CandidateValue    any       `json:"candidate_value,omitempty"`
	CanonicalValue    any       `json:"canonical_value,omitempty"`
}

// PublishConflictOpened publishes n on "hikoutei.<store>.conflict.opened".
// Schema and Kind are set by the Bus, Store defaults to the Bus's store, At
// defaults to now and is converted to UTC, and the values are removed unless
// Config.IncludeValues. It encodes n at once and queues it for a publisher
// goroutine: it never waits on the network. A full queue, a closed Bus or
// NATS being down drop the notification (counted in Stats) and return nil.
// Errors: ErrNotificationInvalid only (missing ConflictID, a Resolution set,
// Store naming another store, a value JSON cannot encode).
func (b *Bus) PublishConflictOpened(n ConflictNotification) error {
	if n.Resolution != "" {
		return fmt.Errorf("%w: conflict %q: resolution %q on an opened notification", ErrNotificationInvalid, n.ConflictID, n.Resolution)
	}
	return b.publishConflict(KindConflictOpened, n)
}

// PublishConflictResolved publishes n on "hikoutei.<store>.conflict.resolved";
// same contract as PublishConflictOpened except that Resolution is required.
// Errors: ErrNotificationInvalid.
func (b *Bus) PublishConflictResolved(n ConflictNotification) error {
	if n.Resolution == "" {
		return fmt.Errorf("%w: conflict %q: resolved notification without resolution", ErrNotificationInvalid, n.ConflictID)
	}
	return b.publishConflict(KindConflictResolved, n)
}

func (b *Bus) publishConflict(kind string, n ConflictNotification) error {
	if n.ConflictID == "" {
		return fmt.Errorf("%w: %s without conflict_id", ErrNotificationInvalid, kind)
	}
	if n.Store == "" {
		n.Store = b.cfg.Store
	} else if n.Store != b.cfg.Store {
		return fmt.Errorf("%w: conflict %q names store %q, bus is %q", ErrNotificationInvalid, n.ConflictID, n.Store, b.cfg.Store)
	}
	n.Schema, n.Kind = ConflictSchemaVersion, kind
	if n.At.IsZero() {
		n.At = time.Now()
	}
	n.At = n.At.UTC()
	if !b.cfg.IncludeValues {
		n.CandidateValue, n.CanonicalValue = nil, nil
	}
	data, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("%w: conflict %q: %v", ErrNotificationInvalid, n.ConflictID, err)
	}
	if b.closed.Load() {
		b.st.notifDropped.Add(1)
		return nil
	}
	select {
	case b.notify <- outMsg{subject: b.Subject(kind), data: data}:
	default:
		b.st.notifDropped.Add(1)
	}
	return nil
}

// notifyLoop hands queued notifications to the connection. While
// reconnecting they go to the client's reconnect buffer (bounded by
// Config.ReconnectBufSize) and are sent after the reconnect.
func (b *Bus) notifyLoop() {
	defer b.wg.Done()
	for {
		select {
		case m := <-b.notify:
			b.sendNotification(m)
		case <-b.done:
			for { // hand over what is already queued, then stop
				select {
				case m := <-b.notify:
					b.sendNotification(m)
				default:
					return
				}
			}
		}
	}
}

func (b *Bus) sendNotification(m outMsg) {
	status := b.nc.Status()
	if status == nats.CLOSED {
		b.st.notifDropped.Add(1)
		return
	}
	msg := &nats.Msg{Subject: m.subject, Data: m.data}
	if guardsSubjects(b.cfg) {
		msg.Header = nats.Header{jetstream.ExpectedStreamHeader: []string{notStored}}
	}
	if err := b.nc.PublishMsg(msg); err != nil {
		b.st.notifDropped.Add(1)
		return
	}
	if status == nats.CONNECTED {
		b.st.notifPublished.Add(1)
	} else {
		b.st.notifBuffered.Add(1)
	}
}

// SubscribeConflicts calls fn for every schema-2 conflict notification of
// this store, published after it returns (when connected; it waits up to
// Config.ConnectTimeout for the server to register the subscription) (opened and resolved; tell them apart by Kind), serially on
// the subscription's goroutine, so fn should return quickly. Messages that
// are not valid JSON or carry another schema are skipped. stop unsubscribes
// (idempotent). Errors: ErrClosed, ErrSubscribeFailed.
func (b *Bus) SubscribeConflicts(fn func(ConflictNotification)) (stop func(), err error) {
	if b.closed.Load() {
		return nil, ErrClosed
	}
	sub, err := b.nc.Subscribe(b.Subject("conflict.*"), func(m *nats.Msg) {
		var n ConflictNotification
		if err := json.Unmarshal(m.Data, &n); err != nil || n.Schema != ConflictSchemaVersion {
			b.cfg.Logger.Debug("conflict notification skipped", "subject", m.Subject, "schema", n.Schema, "err", err)
			return
		}
		fn(n)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: conflicts: %v", ErrSubscribeFailed, err)
	}
	b.flushSubscription()
	return func() { _ = sub.Unsubscribe() }, nil
}
