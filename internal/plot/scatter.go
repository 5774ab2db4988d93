package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Point is one labelled point of a scatter plot (GenSE Figure 2: one
// encoder's alignment and uniformity).
type Point struct {
	Name string
	X, Y float64
}

// filledShapes are the solid markers: a lone point drawn as an outline is
// a few anti-aliased pixels, too faint to find.
var filledShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

// Scatter writes a scatter plot to path (a .png file): each point with its
// own colour and marker, named in the legend. Names are not written beside
// the points: models of one family often land close together, and their
// names would overprint each other.
func Scatter(path string, title, xLabel, yLabel string, points []Point) error {
	if err := checkPath(path); err != nil {
		return err
	}
	if len(points) == 0 {
		return fmt.Errorf("plot: scatter plot %s: no points", path)
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i, pt := range points {
		if math.IsNaN(pt.X) || math.IsInf(pt.X, 0) || math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) {
			return fmt.Errorf("plot: scatter plot %s: point %d (%q) is (%v, %v); both coordinates must be finite", path, i, pt.Name, pt.X, pt.Y)
		}
		xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
		ymin, ymax = math.Min(ymin, pt.Y), math.Max(ymax, pt.Y)
	}
	p := newPlot(title, xLabel, yLabel)
	named := false
	for i, pt := range points {
		sc, err := plotter.NewScatter(plotter.XYs{{X: pt.X, Y: pt.Y}})
		if err != nil {
			return fmt.Errorf("plot: scatter plot %s: point %d (%q): %w", path, i, pt.Name, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(5), Shape: filledShapes[i%len(filledShapes)]}
		p.Add(sc)
		if pt.Name != "" {
			p.Legend.Add(pt.Name, sc)
			named = true
		}
	}
	// Pad both axes (a single point or a flat set gets a small span), and
	// above for the legend.
	pad := func(lo, hi float64) (float64, float64) {
		span := hi - lo
		if span == 0 {
			span = math.Max(0.1, math.Abs(hi)*0.1)
		}
		return lo - 0.1*span, hi + 0.1*span
	}
	p.X.Min, p.X.Max = pad(xmin, xmax)
	p.Y.Min, p.Y.Max = pad(ymin, ymax)
	if named {
		frac := legendHeadroom(p)
		p.Y.Max += (p.Y.Max - p.Y.Min) * frac / (1 - frac)
	}
	return render(p, path)
}
