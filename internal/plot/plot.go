// Package plot writes the project's figures as PNG images: line charts
// (PaSeR Figure 4, average STS Spearman against decoder depth) and kernel
// density plots (PaSeR Figure 5, cosine-similarity densities on STS-B per
// gold-similarity level).
//
// Design choices:
//
//   - Rendering is delegated to gonum.org/v1/plot with its raster backend
//     (vgimg). Text uses the Liberation fonts that gonum/plot embeds and
//     registers in font.DefaultCache, so no system font is needed.
//   - Every figure is 6 x 4 inches at 100 dpi (600 x 400 pixels). The canvas
//     is created here rather than through Plot.Save, because Save fixes the
//     resolution at 96 dpi.
//   - Output is deterministic: the same input gives identical bytes (the
//     rasteriser and image/png have no randomness and no timestamps), so a
//     figure can live in a content-addressed cache or under version control.
//   - Files are written to a temporary file in the destination directory and
//     renamed into place, so an interrupted run never leaves a truncated PNG
//     behind under the final name.
//   - Legends sit inside the plot's top edge; the y range is stretched by the
//     legend's height so the legend never covers data.
//   - Bad input (no series, mismatched lengths, non-finite values, a path
//     that does not end in .png) is an error naming the series or group and
//     the index, never a panic.
package plot

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Figure geometry shared by every figure.
const (
	// WidthInches and HeightInches give the figure size.
	WidthInches  = 6
	HeightInches = 4
	// DPI is the raster resolution; WidthInches*DPI x HeightInches*DPI pixels.
	DPI = 100
)

// palette is a colour-blind-safe qualitative palette (Okabe & Ito, 2008), so
// five similarity levels stay distinguishable; it wraps for more series.
var palette = []color.RGBA{
	{0, 114, 178, 255},   // blue
	{213, 94, 0, 255},    // vermillion
	{0, 158, 115, 255},   // bluish green
	{204, 121, 167, 255}, // reddish purple
	{230, 159, 0, 255},   // orange
	{86, 180, 233, 255},  // sky blue
	{0, 0, 0, 255},       // black
	{240, 228, 66, 255},  // yellow
}

func seriesColor(i int) color.Color { return palette[i%len(palette)] }

// newPlot returns a plot with the project's common styling.
func newPlot(title, xLabel, yLabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(gplot.DefaultFont, 13)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	p.Legend.TextStyle.Font = font.From(gplot.DefaultFont, 10)
	p.Legend.ThumbnailWidth = vg.Points(24)
	// Keep the legend off the plot's right and top borders.
	p.Legend.XOffs = -vg.Points(6)
	p.Legend.YOffs = -vg.Points(2)
	// gonum's default ticker aims at three labels, too sparse to read a
	// Spearman value or a cosine off the figure.
	p.X.Tick.Marker = niceTicks{}
	p.Y.Tick.Marker = niceTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 215}
	grid.Horizontal.Color = color.Gray{Y: 215}
	p.Add(grid)
	return p
}

// niceTicks labels about six round values across the axis.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) {
		return gplot.DefaultTicks{}.Ticks(lo, hi+1)
	}
	// Among 1, 2, 2.5, 5, 10 times a power of ten, take the step whose tick
	// count is closest to six (the larger step on a tie).
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/6)))
	step, best := 0.0, math.Inf(1)
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		st := m * mag
		n := math.Floor(hi/st+1e-9) - math.Ceil(lo/st-1e-9) + 1
		if d := math.Abs(n - 6); d <= best {
			step, best = st, d
		}
	}
	// Decimals needed to print the step exactly (2.5e-k needs one more).
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if s := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9)); math.Abs(s-2.5) < 1e-9 {
		prec++
	}
	var ticks []gplot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // avoid "-0"
		}
		ticks = append(ticks, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
	}
	return ticks
}

// legendHeadroom returns the fraction of the data area the legend occupies
// vertically, so callers can stretch the y range and keep curves below it.
func legendHeadroom(p *gplot.Plot) float64 {
	r := p.Legend.Rectangle(draw.Canvas{})
	h := float64(r.Max.Y - r.Min.Y)
	if h <= 0 {
		return 0
	}
	// The data area is roughly 75% of the figure height once the title and
	// the x axis are laid out; a few points of padding separate the legend
	// from the highest curve.
	dataH := 0.75 * float64(HeightInches*vg.Inch)
	frac := (h + 6) / dataH
	return min(frac, 0.6)
}

// checkPath rejects paths the caller cannot have meant for a PNG.
func checkPath(path string) error {
	if path == "" {
		return fmt.Errorf("plot: empty output path")
	}
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return fmt.Errorf("plot: output path %q must end in .png", path)
	}
	return nil
}

// render draws p onto a WidthInches x HeightInches canvas at DPI and writes
// it as PNG to path atomically (temporary file + rename).
func render(p *gplot.Plot, path string) (err error) {
	c := vgimg.NewWith(
		vgimg.UseWH(WidthInches*vg.Inch, HeightInches*vg.Inch),
		vgimg.UseDPI(DPI),
		vgimg.UseBackgroundColor(color.White),
	)
	p.Draw(draw.New(c))

	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = (vgimg.PngCanvas{Canvas: c}).WriteTo(tmp); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	// CreateTemp makes files 0600; a figure is an ordinary report artefact.
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	return nil
}
