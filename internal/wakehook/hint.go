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

// MaxSheets bounds the sheets a hint names: a union of more names every
// tab, so what pending wakes name (and the cost of merging them) stays
// bounded however many distinct sheetIds a holder of the key sends.
const MaxSheets = 64

// Merge is the hint of the wakes of a and b carried by one poll: every
// tab when either names every tab or their union names more than
// MaxSheets sheets, else that union. Pure.
func Merge(a, b Hint) Hint {
	if a.All || b.All {
		return AllTabs
	}
	s := append(slices.Clone(a.Sheets), b.Sheets...)
	slices.Sort(s)
	if s = slices.Compact(s); len(s) > MaxSheets {
		return AllTabs
	}
	return Hint{Sheets: s}
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
