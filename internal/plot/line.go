package plot

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line of a line chart. X and Y have equal length; a NaN in Y
// is a gap (the line breaks and no marker is drawn), for example a decoder
// depth the paper reports no value for.
type Series struct {
	Name string
	X, Y []float64
}

// Line writes a line chart with markers to path (a .png file): one line per
// series, each with its own colour, marker shape and dash pattern, and a
// legend when any series is named. When every X value is an integer the x
// axis is labelled at integers only (e.g. decoder layers 1..8).
func Line(path string, title, xLabel, yLabel string, series []Series) error {
	if err := checkPath(path); err != nil {
		return err
	}
	if len(series) == 0 {
		return fmt.Errorf("plot: line chart %s: no series", path)
	}
	allInt := true
	finite := 0
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot: line chart %s: series %d (%q): %d X values but %d Y values",
				path, i, s.Name, len(s.X), len(s.Y))
		}
		for j, x := range s.X {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("plot: line chart %s: series %d (%q): X[%d] is %v; X must be finite",
					path, i, s.Name, j, x)
			}
			if x != math.Trunc(x) {
				allInt = false
			}
			y := s.Y[j]
			if math.IsInf(y, 0) {
				return fmt.Errorf("plot: line chart %s: series %d (%q): Y[%d] is %v; use NaN for a gap",
					path, i, s.Name, j, y)
			}
			if !math.IsNaN(y) {
				finite++
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
		}
	}
	if finite == 0 {
		return fmt.Errorf("plot: line chart %s: no finite point in any series", path)
	}

	p := newPlot(title, xLabel, yLabel)
	named := false
	for i, s := range series {
		thumbs, err := addSeries(p, i, s)
		if err != nil {
			return fmt.Errorf("plot: line chart %s: series %d (%q): %w", path, i, s.Name, err)
		}
		if s.Name == "" {
			continue
		}
		named = true
		if len(thumbs) == 0 {
			p.Legend.Add(s.Name + " (no data)")
			continue
		}
		p.Legend.Add(s.Name, thumbs...)
	}
	if allInt {
		p.X.Tick.Marker = integerTicks{}
	}

	// Leave room above the data for the legend; a flat series gets a unit
	// span so the stretch is not zero.
	span := ymax - ymin
	if span == 0 {
		span = math.Max(1, math.Abs(ymax)*0.1)
		ymin -= span / 2
		ymax += span / 2
	}
	pad := 0.05 * span
	p.Y.Min = ymin - pad
	p.Y.Max = ymax + pad
	if named {
		frac := legendHeadroom(p)
		p.Y.Max += (p.Y.Max - p.Y.Min) * frac / (1 - frac)
	}
	return render(p, path)
}

// addSeries draws one series as line segments between gaps plus markers at
// every finite point, and returns the thumbnails for its legend entry (none
// when the series has no finite point).
func addSeries(p *gplot.Plot, i int, s Series) ([]gplot.Thumbnailer, error) {
	lineStyle := draw.LineStyle{
		Color:  seriesColor(i),
		Width:  vg.Points(1.5),
		Dashes: dashes(i),
	}
	glyph := draw.GlyphStyle{
		Color:  seriesColor(i),
		Radius: vg.Points(3),
		Shape:  shape(i),
	}

	// Points in X order so a series given out of order still draws as a
	// function of X; the sort is stable so ties keep their input order.
	idx := make([]int, len(s.X))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(s.X[a], s.X[b]) })

	var all, seg plotter.XYs
	flush := func() error {
		if len(seg) >= 2 {
			l, err := plotter.NewLine(seg)
			if err != nil {
				return err
			}
			l.LineStyle = lineStyle
			p.Add(l)
		}
		seg = nil
		return nil
	}
	for _, k := range idx {
		if math.IsNaN(s.Y[k]) {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		pt := plotter.XY{X: s.X[k], Y: s.Y[k]}
		seg = append(seg, pt)
		all = append(all, pt)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, nil
	}
	sc, err := plotter.NewScatter(all)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = glyph
	p.Add(sc)

	// The legend thumbnail shows the line and the marker together.
	thumbLine := &plotter.Line{LineStyle: lineStyle}
	return []gplot.Thumbnailer{thumbLine, sc}, nil
}

var glyphShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{},
	draw.SquareGlyph{},
	draw.TriangleGlyph{},
	draw.PyramidGlyph{},
	draw.RingGlyph{},
	draw.BoxGlyph{},
	draw.CrossGlyph{},
	draw.PlusGlyph{},
}

func shape(i int) draw.GlyphDrawer { return glyphShapes[i%len(glyphShapes)] }

// dashes gives series 0 a solid line and later series distinct dash
// patterns, so series stay apart in a greyscale print.
func dashes(i int) []vg.Length {
	patterns := [][]vg.Length{
		nil,
		{vg.Points(6), vg.Points(3)},
		{vg.Points(2), vg.Points(2)},
		{vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)},
	}
	return patterns[i%len(patterns)]
}

// integerTicks labels every integer in range when there are few, otherwise
// every k-th integer, so an axis of decoder layers never shows 2.5.
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []gplot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	if last < first {
		// The visible range holds no integer; fall back to the default
		// ticker rather than draw an unlabelled axis.
		return gplot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := math.Max(1, math.Ceil((last-first)/10))
	var ticks []gplot.Tick
	for v := first; v <= last; v += step {
		ticks = append(ticks, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ticks
}
