package events

import (
	"maps"
	"slices"
	"strings"
)

// Batch settle events: one dispatch claims, and one receipt settles, many
// effects at once. Instead of one effect.claimed and one effect.applied
// per effect on the effect's own stream, the dispatch appends an
// effect.batch_claimed and an effect.batch_applied (one per few hundred
// effects) to the spreadsheet's dispatch stream ("dispatch/<spreadsheet>"),
// listing the effects. Each
// item carries every fact of the per-effect event it stands for (Each
// returns them), so a fold treats a batch exactly as its items in order,
// except that the effects' own stream versions do not move: the unit of a
// batch checks each listed effect's stream at the version its decision
// read (an append without events) and the dispatch stream at its own,
// so a concurrent transition of any listed effect still conflicts.
const (
	TypeEffectsClaimed Type = "effect.batch_claimed"
	TypeEffectsApplied Type = "effect.batch_applied"
)

// DispatchStream is the stream of a spreadsheet's batch settle events.
func DispatchStream(spreadsheet string) string { return dispatchPrefix + spreadsheet }

const dispatchPrefix = "dispatch/"

// IsDispatchStream reports whether stream is a DispatchStream.
func IsDispatchStream(stream string) bool { return strings.HasPrefix(stream, dispatchPrefix) }

// EffectsClaimed records the claim of several effects for one dispatch,
// under one claim token and writer lease epoch.
type EffectsClaimed struct {
	// ClaimToken identifies this claim; only its holder may settle it.
	ClaimToken string `canon:"claim_token,required"`
	// Epoch is the writer lease epoch that claimed them.
	Epoch int64 `canon:"epoch"`
	// Attempts maps each claimed effect's id to its attempt: the claims of
	// the effect, this one included.
	Attempts map[string]int64 `canon:"attempts"`
}

// EffectsApplied records that the writes of several effects claimed under
// one token landed (a receipt proves each).
type EffectsApplied struct {
	// ClaimToken is the claim the outcomes settle.
	ClaimToken string `canon:"claim_token,required"`
	// Via is how it was learned: "dispatch" or "probe".
	Via string `canon:"via"`
	// Written maps each applied effect's id to the row's full visible hash
	// after its write.
	Written map[string]string `canon:"written"`
}

// Each returns the per-effect effect.claimed payloads the batch stands
// for, by effect id.
func (b EffectsClaimed) Each() []Payload {
	out := make([]Payload, 0, len(b.Attempts))
	for _, id := range slices.Sorted(maps.Keys(b.Attempts)) {
		out = append(out, EffectClaimed{EffectID: id, ClaimToken: b.ClaimToken, Attempt: b.Attempts[id], Epoch: b.Epoch})
	}
	return out
}

// Each returns the per-effect effect.applied payloads the batch stands
// for, by effect id.
func (b EffectsApplied) Each() []Payload {
	out := make([]Payload, 0, len(b.Written))
	for _, id := range slices.Sorted(maps.Keys(b.Written)) {
		out = append(out, EffectApplied{EffectID: id, ClaimToken: b.ClaimToken, WrittenHash: b.Written[id], Via: b.Via})
	}
	return out
}

// Batch is a payload standing for several per-effect payloads.
type Batch interface {
	Payload
	Each() []Payload
}

// EventType implements Payload.
func (EffectsClaimed) EventType() Type { return TypeEffectsClaimed }

// EventType implements Payload.
func (EffectsApplied) EventType() Type { return TypeEffectsApplied }

func init() {
	register[EffectsClaimed](2, dispatchPrefix+"<spreadsheet>", upcast{from: 1, fn: batchV1})
	expandWith(TypeEffectsClaimed, expandClaimed)
	register[EffectsApplied](2, dispatchPrefix+"<spreadsheet>", upcast{from: 1, fn: batchV1})
	expandWith(TypeEffectsApplied, expandApplied)
}
