package main

import (
	"encoding/json"
	"log"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// point is one convergence sample written by the sync benchmarks (bench/):
// seconds since the first commit (or raw request) and rows converged.
type point struct {
	T    float64 `json:"t"`
	Rows float64 `json:"rows"`
}

func readTrace(dir, name string) plotter.XYs {
	data, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		log.Printf("warning: no %s trace: %v", name, err)
		return plotter.XYs{{}}
	}
	var pts []point
	check(json.Unmarshal(data, &pts))
	xys := make(plotter.XYs, len(pts))
	for i, p := range pts {
		xys[i].X, xys[i].Y = p.T, p.Rows
	}
	return xys
}

// plotConvergence draws rows converged vs seconds: the 10,000-row safe path
// beside raw values.batchUpdate (top) and the 171,075-city backfill beside
// its raw baseline (bottom), with gonum.org/v1/plot.
func plotConvergence(dir, path string) error {
	panel := func(title string, series ...any) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "seconds"
		p.Y.Label.Text = "rows converged"
		p.Legend.Top, p.Legend.Left = true, true
		return p, plotutil.AddLines(p, series...)
	}
	top, err := panel("10,000 new rows, emulator with Google's latency and quota",
		"hikoutei safe path", readTrace(dir, "safe10k"), "raw values.batchUpdate", readTrace(dir, "raw10k"))
	if err != nil {
		return err
	}
	bottom, err := panel("171,075 cities backfill",
		"hikoutei safe path", readTrace(dir, "backfill"), "raw values.batchUpdate", readTrace(dir, "rawbackfill"))
	if err != nil {
		return err
	}
	w, h := 8*vg.Inch, 9*vg.Inch
	for _, img := range []struct {
		c    vg.CanvasWriterTo
		path string
	}{{vgsvg.New(w, h), path}, {vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))}, strings.TrimSuffix(path, ".svg") + ".png"}} {
		dc := draw.New(img.c)
		t := draw.Tiles{Rows: 2, Cols: 1, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 8, PadTop: vg.Millimeter * 4,
			PadBottom: vg.Millimeter * 4, PadLeft: vg.Millimeter * 4, PadRight: vg.Millimeter * 4}
		plots := [][]*plot.Plot{{top}, {bottom}}
		canvases := plot.Align(plots, t, dc)
		for i := range plots {
			plots[i][0].Draw(canvases[i][0])
		}
		f, err := os.Create(img.path)
		if err != nil {
			return err
		}
		if _, err := img.c.WriteTo(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
