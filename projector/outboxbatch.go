package projector

import (
	"encoding/json"
	"strings"
)

// outboxColsNoPayload is outboxCols with the payload left out (NULL).
var outboxColsNoPayload = strings.Replace(outboxCols, "op, payload,", "op, NULL,", 1)

// EffectStates returns the effects with the given ids, keyed by id, in one
// query, WITHOUT their payload (Values is nil): what settling a dispatched
// batch needs. Unknown ids are absent from the map. Errors: SQLite errors.
func (p *Projector) EffectStates(ids []string) (map[string]OutboxRow, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := p.queryOutbox(`SELECT `+outboxColsNoPayload+` FROM hk_outbox
WHERE effect_id IN (SELECT value FROM json_each(?))`, string(list))
	out := make(map[string]OutboxRow, len(rows))
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, err
}
