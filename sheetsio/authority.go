package sheetsio

import (
	"time"
)

// Authority is the spreadsheet authority row (I05): the store that owns the
// spreadsheet and the writer epoch/token last mirrored into it. Present is
// false when the row is blank (never claimed).
type Authority struct {
	Present   bool
	StoreID   string
	Epoch     int64
	Token     string
	UpdatedAt time.Time
}
