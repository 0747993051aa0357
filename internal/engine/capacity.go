package engine

import (
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// ReasonCapacity is both a tab's blocking reason (the rows its effects
// add would pass the spreadsheet's cells: they wait, the other tabs go
// on) and a warning (SyncHealth.Warnings) once the spreadsheet's grid
// reaches capacityWarnShare of them.
const ReasonCapacity SyncReason = sheetsio.CodeSpreadsheetCapacity

// capacityWarnShare is the share of MaxSpreadsheetCells from which sync
// health warns, in percent.
const capacityWarnShare = 80

// SpreadsheetCapacity is how full the spreadsheet's grid is, as the
// store's reads of its tabs' sizes saw it.
type SpreadsheetCapacity struct {
	Cells int64     // rows × columns of every tab, filled or not, at the newest read
	Limit int64     // sheetsio.MaxSpreadsheetCells
	At    time.Time // when the newest read began
	// GrowthKnown: two reads at least a minute apart were kept (since
	// Open, over a week at most), so PerDay is measured; otherwise growth
	// is unknown.
	GrowthKnown bool
	PerDay      float64 // cells a day between the oldest read kept and the newest
	// FullAt is when the grid reaches Limit at PerDay (zero when growth
	// is unknown or not positive).
	FullAt time.Time
	// Since is the first read of the run of reads at or above the warning
	// share (zero while under it).
	Since time.Time
}

// Warns reports whether the grid has reached the warning share.
func (c *SpreadsheetCapacity) Warns() bool {
	return c != nil && c.Cells*100 >= c.Limit*capacityWarnShare
}

// capacityOf projects the samples (oldest first) a client kept; nil
// without any.
func capacityOf(samples []sheetsio.GridSample) *SpreadsheetCapacity {
	if len(samples) == 0 {
		return nil
	}
	first, last := samples[0], samples[len(samples)-1]
	c := &SpreadsheetCapacity{Cells: last.Cells, Limit: sheetsio.MaxSpreadsheetCells, At: last.At}
	if span := last.At.Sub(first.At); span >= time.Minute {
		c.GrowthKnown = true
		c.PerDay = float64(last.Cells-first.Cells) / span.Hours() * 24
	}
	if c.PerDay > 0 && c.Cells < c.Limit {
		days := float64(c.Limit-c.Cells) / c.PerDay
		c.FullAt = last.At.Add(time.Duration(days * float64(24*time.Hour))).Truncate(time.Second)
	}
	for i := len(samples) - 1; i >= 0 && samples[i].Cells*100 >= c.Limit*capacityWarnShare; i-- {
		c.Since = samples[i].At
	}
	return c
}

// capacityWarning is the warning a capacity at or above the warning share
// raises (false under it).
func capacityWarning(c *SpreadsheetCapacity) (SyncWarning, bool) {
	if !c.Warns() {
		return SyncWarning{}, false
	}
	return SyncWarning{Reason: ReasonCapacity, Detail: c.describe(), Since: c.Since, At: c.At}, true
}

// describe says how full the grid is and when it fills.
func (c *SpreadsheetCapacity) describe() string {
	used := fmt.Sprintf("%d of %d cells (%d %%)", c.Cells, c.Limit, c.Cells*100/c.Limit)
	switch {
	case !c.FullAt.IsZero():
		return fmt.Sprintf("%s: full around %s at the current growth (%.0f cells a day)", used, c.FullAt.UTC().Format(time.DateOnly), c.PerDay)
	case c.Cells >= c.Limit:
		return used + ": full"
	case c.GrowthKnown:
		return used + ": not growing"
	}
	return used + ": growth unknown (one read of the grid so far)"
}
