package sheetsio

import (
	"maps"
	"sync"
	"time"
)

// MaxSpreadsheetCells is how many grid cells one Google spreadsheet holds:
// rows × columns of every tab summed, filled or not.
const MaxSpreadsheetCells = 10_000_000

// GridSample is the size of a spreadsheet's grid as one read saw it.
type GridSample struct {
	Cells int64     // rows × columns of every tab, filled or not
	At    time.Time // when the read began (the client's clock)
}

// TabGrid is one tab's grid size.
type TabGrid struct{ Rows, Cols int64 }

// Cells is the tab's rows × columns.
func (g TabGrid) Cells() int64 { return g.Rows * g.Cols }

// Grid sample retention: samples closer than gridSampleSpacing replace the
// newest one; samples older than gridSampleWindow before the newest, and
// past gridSampleCap, are dropped.
const (
	gridSampleSpacing = time.Minute
	gridSampleWindow  = 7 * 24 * time.Hour
	gridSampleCap     = 256
)

// gridLog is what a Workbook knows of its spreadsheet's grid: the samples
// its client's reads took, the tabs' sizes at the newest, and the cells
// the client's own writes added since (an upper bound).
type gridLog struct {
	mu      sync.Mutex
	samples []GridSample
	tabs    map[int64]TabGrid // by sheetId, at the newest sample
	grown   int64             // cells added by writes since the newest sample (at most)
}

// NoteGrid records the grid of every tab of the spreadsheet (by sheetId)
// as a read that began at at saw it. A Client calls it whenever it reads
// the tabs' grid properties.
func (w *Workbook) NoteGrid(tabs map[int64]TabGrid, at time.Time) {
	var cells int64
	for _, g := range tabs {
		cells += g.Cells()
	}
	l := &w.grid
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tabs, l.grown = maps.Clone(tabs), 0
	l.samples = appendSample(l.samples, GridSample{Cells: cells, At: at})
}

// appendSample adds s to samples within the retention rules.
func appendSample(samples []GridSample, s GridSample) []GridSample {
	if n := len(samples); n > 1 && s.At.Sub(samples[n-2].At) < gridSampleSpacing {
		samples = samples[:n-1] // within a minute of the one before: refresh the newest
	}
	samples = append(samples, s)
	i := 0
	for i < len(samples)-1 && (s.At.Sub(samples[i].At) > gridSampleWindow || len(samples)-i > gridSampleCap) {
		i++
	}
	return append(samples[:0], samples[i:]...)
}

// GridGrew records that a write added at most cells to the grid since the
// newest sample.
func (w *Workbook) GridGrew(cells int64) {
	w.grid.mu.Lock()
	w.grid.grown += cells
	w.grid.mu.Unlock()
}

// GridNow is the grid as the newest sample saw it plus what writes added
// since (an upper bound), and the tabs' sizes at that sample; ok is false
// before any sample.
func (w *Workbook) GridNow() (cells int64, tabs map[int64]TabGrid, at time.Time, ok bool) {
	l := &w.grid
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.samples)
	if n == 0 {
		return 0, nil, time.Time{}, false
	}
	last := l.samples[n-1]
	return last.Cells + l.grown, maps.Clone(l.tabs), last.At, true
}

// GridSamples returns the grid samples kept, oldest first (at most a week
// before the newest).
func (w *Workbook) GridSamples() []GridSample {
	w.grid.mu.Lock()
	defer w.grid.mu.Unlock()
	return append([]GridSample(nil), w.grid.samples...)
}
