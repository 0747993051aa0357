package projector

// Sync health's queries, for their plans.
var DroppedRowsQuery, MigratedRowsQuery = droppedRows, migratedRows
