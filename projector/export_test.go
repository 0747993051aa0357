package projector

// Sync health's queries, for their plans.
var DroppedRowsQuery, MigratedRowsQuery = droppedRows, migratedRows

// ItemWise makes p project batch settle events item by item only, as
// before the set-wise paths (outbox_batch.go), for comparing the two.
func (p *Projector) ItemWise() { p.itemWise = true }

// CheckpointRings is how many times the writer rang the checkpointer, and
// CheckpointRuns how many checkpoints it ran (0, 0 without one).
func (p *Projector) CheckpointRings() int {
	if p.ckpt == nil {
		return 0
	}
	return p.ckpt.rings
}

func (p *Projector) CheckpointRuns() int {
	if p.ckpt == nil {
		return 0
	}
	p.ckpt.mu.Lock()
	defer p.ckpt.mu.Unlock()
	return p.ckpt.runs
}

// CheckpointEvery is checkpointEvery.
const CheckpointEvery = checkpointEvery
