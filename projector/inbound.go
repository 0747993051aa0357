package projector

import "github.com/hikoutei/hikoutei-go/events"

// applyInbound projects the inbound side (observations, candidates,
// conflicts, quarantine, evidence). It reports whether it handled e.
func (p *Projector) applyInbound(e *events.Event) (bool, error) {
	return false, nil
}
