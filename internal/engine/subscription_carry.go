package engine

import (
	"github.com/hikoutei/hikoutei-go/projector"
)

// carrySubscriptions keeps the callback subscriptions' checkpoints when
// the read model is replaced by a snapshot or a rebuild: they are copied
// from the file set aside (see projector.CarrySubscriptions). A file that
// cannot be read carries none: those subscriptions resume from the
// replacement's checkpoints (a snapshot's) or from the first event.
func (e *Engine) carrySubscriptions(aside string) {
	if aside == "" {
		return
	}
	n, err := projector.CarrySubscriptions(aside, e.ReadModelPath())
	if err != nil {
		e.log.Warn("subscription checkpoints not carried over from the unusable read model", "err", err.Error())
		return
	}
	if n > 0 {
		e.log.Info("subscription checkpoints carried over", "subscriptions", n)
	}
}

// carryRebuilt is carrySubscriptions for RebuildReadModel: from the read
// model at from into the rebuilt one at to, best effort (a missing or
// damaged read model, often the reason for the rebuild, carries none).
func carryRebuilt(from, to string) {
	_, _ = projector.CarrySubscriptions(from, to)
}
