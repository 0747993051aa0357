package emulator

import (
	"bytes"
	"encoding/json"
)

// Data validation. Google keeps a rule per cell: setDataValidation sets
// (or, without a rule, clears) it on every cell of its range; updateCells
// and repeatCell set it with the "dataValidation" field mask; a value
// written into the cell keeps it; it moves with its row or column when
// rows or columns are inserted, deleted or moved, and is deleted with
// them. The emulator stores the rule as the request carried it and
// enforces nothing (a strict rule's rejection of other input is not
// modelled); spreadsheets.get returns it as the cell's dataValidation.

// compactRule is the stored form of a rule: compact JSON, "" for none
// (absent or null).
func compactRule(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return ""
	}
	return buf.String()
}

func reqSetDataValidation(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Range gridRangeIn     `json:"range"`
		Rule  json.RawMessage `json:"rule"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, g, err := b.resolveGrid(req.Range)
	if err != nil {
		return nil, err
	}
	rule := compactRule(req.Rule)
	for r := g.R0; r < g.R1; r++ {
		for c := g.C0; c < g.C1; c++ {
			cd := s.cell(r, c)
			cd.DV = rule
			s.setCell(r, c, cd)
		}
	}
	return nil, nil
}
