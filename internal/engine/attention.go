package engine

import (
	"context"
	"fmt"

	"github.com/hikoutei/hikoutei-go/projector"
)

// Attention is what waits for a person, from the read model: open
// conflicts, and the active quarantine records by reason code.
type Attention struct {
	OpenConflicts int64
	Quarantine    map[string]int64
}

// Attention counts open conflicts and active quarantine records through
// the read pool, waiting at most healthReadWait for a connection (metrics
// scrapes call it; it never waits on the network). Errors: ErrStoreClosed;
// a read-model error.
func (e *Engine) Attention(ctx context.Context) (Attention, error) {
	ctx, cancel := context.WithTimeout(ctx, healthReadWait)
	defer cancel()
	conn, err := e.ReadConn(ctx)
	if err != nil {
		return Attention{}, fmt.Errorf("attention: read model: %w", err)
	}
	defer e.PutConn(conn)
	conn.SetInterrupt(nil)
	a := Attention{Quarantine: map[string]int64{}}
	if a.OpenConflicts, err = projector.OpenConflictCount(conn); err != nil {
		return a, err
	}
	reasons, err := projector.QuarantineReasons(conn)
	for _, r := range reasons {
		a.Quarantine[r.Reason] = r.Count
	}
	return a, err
}

// LogHead is the highest log sequence appended (the read model's
// checkpoint trails it while events wait to be projected).
func (e *Engine) LogHead() (uint64, error) { return e.Log().Head() }
