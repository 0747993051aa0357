package projector

// Sync health's queries, for their plans.
var DroppedRowsQuery, MigratedRowsQuery = droppedRows, migratedRows

// ItemWise makes p project batch settle events item by item only, as
// before the set-wise paths (outbox_batch.go), for comparing the two.
func (p *Projector) ItemWise() { p.itemWise = true }
