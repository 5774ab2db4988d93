package plot

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func geometryPoints() []Point {
	return []Point{
		{Name: "GenSE", X: 0.31, Y: -2.9},
		{Name: "+Prompt", X: 0.27, Y: -2.6},
		{Name: "ST5-EncDec", X: 0.22, Y: -2.2},
		{Name: "ST5-Enc", X: 0.20, Y: -2.0},
	}
}

func TestScatterPNG(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "fig2.png")
	if err := Scatter(path, "Alignment and uniformity", "alignment", "uniformity", geometryPoints()); err != nil {
		t.Fatal(err)
	}
	d := readPNG(t, path) // checks it decodes at WidthInches*DPI x HeightInches*DPI
	for i := 0; i < 4; i++ {
		if n := countNear(d.img, palette[i]); n < 20 {
			t.Errorf("point %d colour %v covers only %d pixels", i, palette[i], n)
		}
	}
	if n := countNear(d.img, palette[5]); n != 0 {
		t.Errorf("colour of a sixth point appears (%d pixels) with four points", n)
	}
	noTempLeft(t, dir, 1)
}

func TestScatterDeterministicAndEdges(t *testing.T) {
	t.Parallel()
	sameBytes(t, func(p string) error { return Scatter(p, "t", "x", "y", geometryPoints()) })
	dir := t.TempDir()
	// One point, and points on a flat line, still get a readable range.
	for name, pts := range map[string][]Point{
		"one":  {{Name: "only", X: 0.5, Y: -1}},
		"flat": {{Name: "a", X: 1, Y: 2}, {Name: "b", X: 1, Y: 2}},
	} {
		p := filepath.Join(dir, name+".png")
		if err := Scatter(p, name, "x", "y", pts); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		readPNG(t, p)
	}
}

func TestScatterBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		path string
		pts  []Point
		want string
	}{
		{filepath.Join(dir, "a.png"), nil, "no points"},
		{filepath.Join(dir, "a.png"), []Point{{Name: "bad", X: math.NaN(), Y: 1}}, `point 0 ("bad") is (NaN, 1)`},
		{filepath.Join(dir, "a.jpg"), geometryPoints(), "must end in .png"},
	} {
		if err := Scatter(c.path, "t", "x", "y", c.pts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.pts, err, c.want)
		}
	}
	noTempLeft(t, dir, 0)
}
