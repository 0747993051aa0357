package emulator

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
)

// Cell kinds as stored (what a person typed or an API wrote).
const (
	kindEmpty   = ""
	kindNumber  = "n"
	kindString  = "s"
	kindBool    = "b"
	kindFormula = "f"
)

// cellData is one stored cell: the user-entered value, the number format the
// input implied (dates, times, percents) and a note. Zero value = empty cell.
type cellData struct {
	Kind   string  `json:"k,omitempty"`
	Num    float64 `json:"n,omitempty"`
	Str    string  `json:"s,omitempty"`
	Bool   bool    `json:"b,omitempty"`
	Fmt    string  `json:"f,omitempty"`
	FmtPat string  `json:"p,omitempty"`
	Note   string  `json:"note,omitempty"`
	// DV is the cell's data validation rule, as the request that set it
	// carried it (compact JSON; "" = none). Like a note it stays when the
	// value changes and moves with its row or column.
	DV string `json:"dv,omitempty"`
}

// isEmpty reports whether the cell holds neither a value nor a note: what
// appends count as data (a validation rule alone is not data).
func (c cellData) isEmpty() bool { return c.Kind == kindEmpty && c.Note == "" }

// isBlank reports whether the cell holds nothing at all, validation
// included: such a cell need not be stored.
func (c cellData) isBlank() bool { return c.isEmpty() && c.DV == "" }

// keepAttached copies what stays on a cell when its value is replaced:
// the note and the data validation.
func (c cellData) keepAttached(from cellData) cellData {
	c.Note, c.DV = from.Note, from.DV
	return c
}

// hasValue reports whether the cell holds a value (notes do not count).
func (c cellData) hasValue() bool { return c.Kind != kindEmpty }

// gridRange is a resolved, concrete, half-open zero-based rectangle.
type gridRange struct {
	SheetID int64 `json:"sheetId"`
	R0      int   `json:"r0"`
	R1      int   `json:"r1"`
	C0      int   `json:"c0"`
	C1      int   `json:"c1"`
}

func (g gridRange) rows() int { return g.R1 - g.R0 }
func (g gridRange) cols() int { return g.C1 - g.C0 }

// protectedRange is a stored protected range.
type protectedRange struct {
	ID          int64           `json:"id"`
	Range       gridRange       `json:"range"`
	Description string          `json:"description,omitempty"`
	WarningOnly bool            `json:"warningOnly,omitempty"`
	Editors     json.RawMessage `json:"editors,omitempty"`
}

// devMeta is stored developer metadata. LocType is SPREADSHEET, SHEET, ROWS
// or COLUMNS; Start/End are the half-open dimension span for ROWS/COLUMNS.
type devMeta struct {
	ID         int64  `json:"id"`
	Key        string `json:"key"`
	Value      string `json:"value,omitempty"`
	Visibility string `json:"visibility"`
	LocType    string `json:"locType"`
	SheetID    int64  `json:"sheetId,omitempty"`
	Start      int    `json:"start,omitempty"`
	End        int    `json:"end,omitempty"`
}

// sheet is one tab. Rows holds at most RowCount rows; a short row means the
// remaining cells are empty.
type sheet struct {
	ID            int64            `json:"sheetId"`
	Title         string           `json:"title"`
	Hidden        bool             `json:"hidden,omitempty"`
	RowCount      int              `json:"rowCount"`
	ColCount      int              `json:"columnCount"`
	FrozenRows    int              `json:"frozenRowCount,omitempty"`
	FrozenCols    int              `json:"frozenColumnCount,omitempty"`
	HideGridlines bool             `json:"hideGridlines,omitempty"`
	RightToLeft   bool             `json:"rightToLeft,omitempty"`
	TabColor      json.RawMessage  `json:"tabColorStyle,omitempty"`
	Rows          [][]cellData     `json:"rows,omitempty"`
	Merges        []gridRange      `json:"merges,omitempty"`
	Protected     []protectedRange `json:"protected,omitempty"`
	Groups        []dimGroup       `json:"groups,omitempty"`
	BasicFilter   json.RawMessage  `json:"basicFilter,omitempty"`
}

// namedRange is a stored named range (ids are strings in the API).
type namedRange struct {
	ID    string    `json:"id"`
	Name  string    `json:"name"`
	Range gridRange `json:"range"`
}

// dimGroup is a row or column group (depth 1 per add; nested adds deepen).
type dimGroup struct {
	Dim       string `json:"dim"`
	Start     int    `json:"start"`
	End       int    `json:"end"`
	Depth     int    `json:"depth"`
	Collapsed bool   `json:"collapsed,omitempty"`
}

// book is one spreadsheet.
type book struct {
	ID         string       `json:"spreadsheetId"`
	Title      string       `json:"title"`
	Locale     string       `json:"locale"`
	TimeZone   string       `json:"timeZone"`
	AutoRecalc string       `json:"autoRecalc"`
	Sheets     []*sheet     `json:"sheets"`
	Meta       []*devMeta   `json:"developerMetadata,omitempty"`
	Named      []namedRange `json:"namedRanges,omitempty"`
	IDSeq      uint64       `json:"idSeq"`

	tap *tap // the reads of the access under way (observed books only)
}

// Defaults of a fresh Google spreadsheet, as the recordings show.
const (
	defaultRows     = 1000
	defaultCols     = 26
	defaultLocale   = "en_US"
	defaultTimeZone = "Etc/GMT"
	maxCellsPerBook = 10_000_000
	maxCellChars    = 50_000
)

func newBook(id, title string) *book {
	if title == "" {
		title = "Untitled spreadsheet"
	}
	b := &book{ID: id, Title: title, Locale: defaultLocale, TimeZone: defaultTimeZone, AutoRecalc: "ON_CHANGE"}
	b.Sheets = []*sheet{{ID: 0, Title: "Sheet1", RowCount: defaultRows, ColCount: defaultCols}}
	return b
}

// nextID returns a deterministic positive 31-bit id unique within the book
// (Google's ids look random; ours derive from the spreadsheet id and a
// counter so replays are reproducible).
func (b *book) nextID() int64 {
	for {
		b.IDSeq++
		h := fnv.New64a()
		h.Write([]byte(b.ID + "#" + strconv.FormatUint(b.IDSeq, 10)))
		id := int64(h.Sum64()%2147483646) + 1
		if !b.idTaken(id) {
			return id
		}
	}
}

func (b *book) idTaken(id int64) bool {
	for _, s := range b.Sheets {
		if s.ID == id {
			return true
		}
		for _, p := range s.Protected {
			if p.ID == id {
				return true
			}
		}
	}
	for _, m := range b.Meta {
		if m.ID == id {
			return true
		}
	}
	return false
}

func (b *book) sheetByID(id int64) *sheet {
	for _, s := range b.Sheets {
		if s.ID == id {
			return s
		}
	}
	return nil
}

func (b *book) sheetByTitle(title string) *sheet {
	for _, s := range b.Sheets {
		if s.Title == title {
			return s
		}
	}
	return nil
}

// firstVisible is the tab a range without a tab name refers to.
func (b *book) firstVisible() *sheet {
	for _, s := range b.Sheets {
		if !s.Hidden {
			return s
		}
	}
	return b.Sheets[0]
}

func (b *book) indexOf(s *sheet) int {
	for i, x := range b.Sheets {
		if x == s {
			return i
		}
	}
	return -1
}

func (b *book) totalCells() int {
	n := 0
	for _, s := range b.Sheets {
		n += s.RowCount * s.ColCount
	}
	return n
}

// clone deep-copies the book so a batch can be applied atomically.
func (b *book) clone() *book {
	c := *b
	c.Sheets = make([]*sheet, len(b.Sheets))
	for i, s := range b.Sheets {
		c.Sheets[i] = s.clone()
	}
	c.Meta = make([]*devMeta, len(b.Meta))
	for i, m := range b.Meta {
		mm := *m
		c.Meta[i] = &mm
	}
	c.Named = append([]namedRange(nil), b.Named...)
	return &c
}

func (s *sheet) clone() *sheet {
	c := *s
	c.Rows = make([][]cellData, len(s.Rows))
	for i, r := range s.Rows {
		c.Rows[i] = append([]cellData(nil), r...)
	}
	c.Merges = append([]gridRange(nil), s.Merges...)
	c.Protected = append([]protectedRange(nil), s.Protected...)
	c.Groups = append([]dimGroup(nil), s.Groups...)
	return &c
}

// cell returns the cell at (r, c), empty when unset.
func (s *sheet) cell(r, c int) cellData {
	if r < 0 || r >= len(s.Rows) || c < 0 || c >= len(s.Rows[r]) {
		return cellData{}
	}
	return s.Rows[r][c]
}

// setCell stores v at (r, c), growing the sparse rows as needed. Storing
// an empty cell beyond the stored rows is a no-op, so clearing a huge range
// (updateCells/repeatCell over a whole 10M-cell tab) allocates nothing.
func (s *sheet) setCell(r, c int, v cellData) {
	if v.isBlank() && (r >= len(s.Rows) || c >= len(s.Rows[r])) {
		return
	}
	for len(s.Rows) <= r {
		s.Rows = append(s.Rows, nil)
	}
	row := s.Rows[r]
	for len(row) <= c {
		row = append(row, cellData{})
	}
	row[c] = v
	s.Rows[r] = row
}

// setValue replaces the value of (r, c), keeping its note and validation.
func (s *sheet) setValue(r, c int, v cellData) {
	s.setCell(r, c, v.keepAttached(s.cell(r, c)))
}
