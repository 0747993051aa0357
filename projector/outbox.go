package projector

import (
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Effect event types (mirrors aggregates; the projector imports only events).
const (
	typeEffectQueued    = "effect.queued"
	typeEffectClaimed   = "effect.claimed"
	typeEffectApplied   = "effect.applied"
	typeEffectFailed    = "effect.failed"
	typeEffectUncertain = "effect.delivery_uncertain"
	typeEffectProbe     = "effect.probe_scheduled"
	typeEffectSupersede = "effect.superseded"
	typeEffectConflict  = "effect.conflict"
	typeEffectBlocked   = "effect.blocked_candidate"
)

func (p *Projector) applyEffect(e *events.Event) (bool, error) {
	switch e.Type {
	case typeEffectQueued:
		return true, p.effectQueued(e)
	case typeEffectClaimed:
		return true, p.effectSet(e, "processing", "claim_token = ?, attempts = ?, probes = 0, due_at = NULL, last_code = NULL", str(e, "claim_token"), num(e, "attempt"))
	case typeEffectApplied:
		if err := p.effectSet(e, "applied", "written_hash = ?, due_at = NULL", str(e, "written_hash")); err != nil {
			return true, err
		}
		return true, p.visibleApplied(e)
	case typeEffectUncertain:
		return true, p.effectSet(e, "delivery_uncertain", "due_at = ?, last_code = ?", timeText(e, "probe_at"), str(e, "code"))
	case typeEffectProbe:
		return true, p.effectSet(e, "delivery_uncertain", "due_at = ?, probes = ?", timeText(e, "probe_at"), num(e, "probes"))
	case typeEffectFailed:
		terminal, _ := e.Payload["terminal"].(bool)
		return true, p.effectSet(e, "failed", "terminal = ?, due_at = ?, last_code = ?, observed_hash = ?", terminal, timeText(e, "retry_at"), str(e, "code"), str(e, "observed_hash"))
	case typeEffectSupersede:
		return true, p.effectSet(e, "superseded", "superseded_by = ?", str(e, "by"))
	case typeEffectConflict:
		return true, p.effectSet(e, "conflict", "last_code = ?, observed_hash = ?", str(e, "code"), str(e, "observed_hash"))
	case typeEffectBlocked:
		return true, p.effectSet(e, "blocked_candidate", "last_code = ?", str(e, "code"))
	}
	return false, nil
}

func str(e *events.Event, k string) string { s, _ := e.Payload[k].(string); return s }
func num(e *events.Event, k string) int64  { n, _ := e.Payload[k].(int64); return n }

// timeText renders a payload time as the stored TEXT form, or nil.
func timeText(e *events.Event, k string) any {
	if t, ok := e.Payload[k].(time.Time); ok {
		return t.UTC().Format(TimeLayout)
	}
	return nil
}

func (p *Projector) effectQueued(e *events.Event) error {
	values, err := events.EncodeCanonical(e.Payload["values"])
	if err != nil {
		return err
	}
	return p.exec(`INSERT INTO hk_outbox (effect_id, spreadsheet, tab, anchor, binding, stream_sequence, op, payload,
  payload_hash, entity, entity_id, queued_seq, updated_seq, expected_hash, state, version)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, nullif(?, ''), 'pending', 0)`,
		str(e, "effect_id"), str(e, "spreadsheet"), str(e, "tab"), str(e, "anchor"), str(e, "binding"),
		num(e, "stream_sequence"), str(e, "op"), values, str(e, "payload_hash"), str(e, "entity"), str(e, "id"),
		int64(e.Seq), int64(e.Seq), str(e, "expected_hash"))
}

// effectSet moves an effect to state and sets extra columns (set is a
// fixed SQL fragment with ? placeholders for args).
func (p *Projector) effectSet(e *events.Event, state, set string, args ...any) error {
	return p.exec("UPDATE hk_outbox SET state = ?, version = ?, updated_seq = ?, "+set+" WHERE effect_id = ?",
		append(append([]any{state, int64(e.Version), int64(e.Seq)}, args...), str(e, "effect_id"))...)
}

// visibleApplied records the row's visible hash after an applied effect.
func (p *Projector) visibleApplied(e *events.Event) error {
	return p.exec(`INSERT INTO hk_visible_state (binding, tab, anchor, revision, hash, effect_id, seq)
SELECT binding, tab, anchor, 1, ?, effect_id, ? FROM hk_outbox WHERE effect_id = ?
ON CONFLICT (binding) DO UPDATE SET revision = revision + 1, hash = excluded.hash, effect_id = excluded.effect_id, seq = excluded.seq`,
		str(e, "written_hash"), int64(e.Seq), str(e, "effect_id"))
}
