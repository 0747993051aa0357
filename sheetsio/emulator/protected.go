package emulator

import "encoding/json"

type protectedIn struct {
	ProtectedRangeID *int64          `json:"protectedRangeId"`
	Range            *gridRangeIn    `json:"range"`
	Description      *string         `json:"description"`
	WarningOnly      *bool           `json:"warningOnly"`
	Editors          json.RawMessage `json:"editors"`
}

// protectedJSON renders a ProtectedRange like Google does for its owner.
func protectedJSON(p protectedRange) map[string]any {
	out := map[string]any{"protectedRangeId": p.ID, "range": gridRangeJSON(p.Range), "requestingUserCanEdit": true}
	if p.Description != "" {
		out["description"] = p.Description
	}
	if p.WarningOnly {
		out["warningOnly"] = true
	} else {
		out["editors"] = map[string]any{}
	}
	return out
}

func reqAddProtected(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		ProtectedRange protectedIn `json:"protectedRange"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	in := req.ProtectedRange
	if in.Range == nil {
		return nil, errorf(ErrInvalidArgument, "A protected range must have a range.")
	}
	s, g, err := b.resolveGrid(*in.Range)
	if err != nil {
		return nil, err
	}
	p := protectedRange{Range: g, Description: deref(in.Description), WarningOnly: deref(in.WarningOnly), Editors: in.Editors}
	if in.ProtectedRangeID != nil {
		if b.idTaken(*in.ProtectedRangeID) {
			return nil, errorf(ErrInvalidArgument, "A protected range with ID %d already exists.", *in.ProtectedRangeID)
		}
		p.ID = *in.ProtectedRangeID
	} else {
		p.ID = b.nextID()
	}
	if p.WarningOnly && len(in.Editors) > 0 && string(in.Editors) != "null" && hasEditors(in.Editors) {
		return nil, errorf(ErrInvalidArgument, "A warning-only protected range cannot have editors.")
	}
	s.Protected = append(s.Protected, p)
	return map[string]any{"protectedRange": protectedJSON(p)}, nil
}

func hasEditors(raw json.RawMessage) bool {
	var e struct {
		Users  []string `json:"users"`
		Groups []string `json:"groups"`
	}
	_ = json.Unmarshal(raw, &e)
	return len(e.Users)+len(e.Groups) > 0
}

// findProtected returns the sheet and index of a protected range id.
func (b *book) findProtected(id int64) (*sheet, int) {
	for _, s := range b.Sheets {
		for i, p := range s.Protected {
			if p.ID == id {
				return s, i
			}
		}
	}
	return nil, -1
}

func reqUpdateProtected(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		ProtectedRange protectedIn `json:"protectedRange"`
		Fields         string      `json:"fields"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	in := req.ProtectedRange
	s, i := b.findProtected(deref(in.ProtectedRangeID))
	if s == nil {
		return nil, errorf(ErrInvalidArgument, "No protected range with id: %d", deref(in.ProtectedRangeID))
	}
	mask := parseMask(req.Fields)
	p := &s.Protected[i]
	if mask["description"] || mask["*"] {
		p.Description = deref(in.Description)
	}
	if mask["warningOnly"] || mask["*"] {
		p.WarningOnly = deref(in.WarningOnly)
	}
	if (mask["range"] || mask["*"]) && in.Range != nil {
		s2, g, err := b.resolveGrid(*in.Range)
		if err != nil {
			return nil, err
		}
		if s2 != s {
			return nil, errorf(ErrInvalidArgument, "A protected range cannot move to another sheet.")
		}
		p.Range = g
	}
	return nil, nil
}

func reqDeleteProtected(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		ProtectedRangeID int64 `json:"protectedRangeId"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, i := b.findProtected(req.ProtectedRangeID)
	if s == nil {
		return nil, errorf(ErrInvalidArgument, "No protected range with id: %d", req.ProtectedRangeID)
	}
	s.Protected = append(s.Protected[:i], s.Protected[i+1:]...)
	return nil, nil
}
