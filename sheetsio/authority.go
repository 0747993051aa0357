package sheetsio

import (
	"time"
)

// Authority is the spreadsheet authority row (I05): the store that owns the
// spreadsheet and the writer epoch/token last mirrored into it. Present is
// false when the row is blank (never claimed). Head is the hash-chain head
// the row publishes (zero when its cell is blank or not SEQ:HASH); the
// fence never reads it.
type Authority struct {
	Present   bool
	StoreID   string
	Epoch     int64
	Token     string
	UpdatedAt time.Time
	Head      ChainHead
}
