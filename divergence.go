package hikoutei

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// TypeSyncDiverged records that a sync target's authority stopped naming
// this writer; the read model keeps it in hk_meta ("divergence:<target>").
const TypeSyncDiverged = "sync.diverged"

// RecordDivergence appends sync.diverged for spreadsheet (effects.Outbox).
func (s *Store) RecordDivergence(spreadsheet, reason string) error {
	return s.onWriter(func() error {
		return s.appendDecisions([]aggregates.Decision{{Stream: "sync/" + spreadsheet, ExpectedVersion: events.AnyVersion,
			Events: []events.Event{{Type: TypeSyncDiverged, Schema: 1, Payload: map[string]any{"target": spreadsheet, "reason": reason}}}}})
	})
}
