package emulator

import "encoding/json"

// DeleteTab deletes a tab as a person would (Delete sheet in the UI),
// with the same rules as a deleteSheet request.
func (p *Person) DeleteTab(tab string) error {
	return p.edit(tab, func(b *book, s *sheet) error {
		raw, err := json.Marshal(map[string]int64{"sheetId": s.ID})
		if err != nil {
			return err
		}
		_, err = reqDeleteSheet(b, raw)
		return err
	})
}

// ClearTab clears every cell of a tab from 1-based row `from` down (1
// clears the header too), as selecting the rows and pressing Delete does.
func (p *Person) ClearTab(tab string, from int) error {
	return p.e.edited(p.id, tab, p.edit(tab, func(b *book, s *sheet) error {
		if from < 1 {
			return errorf(ErrInvalidArgument, "invalid first row")
		}
		if from-1 < len(s.Rows) {
			s.Rows = s.Rows[:from-1]
		}
		return nil
	}))
}

// ReplaceSpreadsheet empties a spreadsheet in place: what remains is a
// fresh spreadsheet with the same id (one tab "Sheet1"), as if a person
// had replaced the file. Errors: ErrNotFound for an unknown id.
func (e *Emulator) ReplaceSpreadsheet(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	old, ok := e.books[id]
	if !ok {
		return errorf(ErrNotFound, "spreadsheet not found")
	}
	e.books[id] = newBook(id, old.Title)
	return nil
}
