package wakehook

import (
	"encoding/json"
	"fmt"
	"slices"
)

// maxBody bounds a wake's body.
const maxBody = 256

// Hint is what accepted wakes name: the sheets (tabs, by sheetId) a
// person edited, or every tab. The zero Hint names nothing (no wake yet).
type Hint struct {
	All    bool    // poll every tab
	Sheets []int64 // sorted and distinct; only when not All
}

// AllTabs is the hint of a wake that names no sheet (the first script's).
var AllTabs = Hint{All: true}

// Merge is the hint of the wakes of a and b carried by one poll: every
// tab when either names every tab, else the union of their sheets. Pure.
func Merge(a, b Hint) Hint {
	if a.All || b.All {
		return AllTabs
	}
	s := append(slices.Clone(a.Sheets), b.Sheets...)
	slices.Sort(s)
	return Hint{Sheets: slices.Compact(s)}
}

// ParseBody is the hint a wake's body names: an empty body (the first
// script's wake) names every tab, {"sheet": N} the sheet whose sheetId is
// N. Errors: ErrMalformed.
func ParseBody(body []byte) (Hint, error) {
	if len(body) == 0 {
		return AllTabs, nil
	}
	var b struct {
		Sheet *int64 `json:"sheet"`
	}
	if len(body) > maxBody || json.Unmarshal(body, &b) != nil || b.Sheet == nil || *b.Sheet < 0 {
		return Hint{}, fmt.Errorf(`%w: the body must be {"sheet": <sheetId>} of at most %d bytes`, ErrMalformed, maxBody)
	}
	return Hint{Sheets: []int64{*b.Sheet}}, nil
}
