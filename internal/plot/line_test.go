package plot

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func decoderDepthSeries() []Series {
	layers := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	return []Series{
		{Name: "ours", X: layers, Y: []float64{71.2, 72.0, 72.9, 73.4, 73.9, 74.3, 73.8, 73.1}},
		// A reference with missing depths: NaN gaps.
		{Name: "reference", X: layers, Y: []float64{70.5, math.NaN(), 72.5, 73.0, math.NaN(), 74.0, 73.5, 72.8}},
	}
}

func TestLinePNG(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "fig4.png")
	if err := Line(path, "Decoder depth", "decoder layers", "avg. STS Spearman", decoderDepthSeries()); err != nil {
		t.Fatal(err)
	}
	d := readPNG(t, path)
	for i := 0; i < 2; i++ {
		if n := countNear(d.img, palette[i]); n < 50 {
			t.Errorf("series %d colour %v covers only %d pixels", i, palette[i], n)
		}
	}
	if n := countNear(d.img, palette[2]); n != 0 {
		t.Errorf("colour of a third series appears (%d pixels) with only two series", n)
	}
	noTempLeft(t, dir, 1)
}

func TestLineDeterministic(t *testing.T) {
	t.Parallel()
	sameBytes(t, func(p string) error {
		return Line(p, "Decoder depth", "layers", "Spearman", decoderDepthSeries())
	})
}

func TestLineEdgeCases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := map[string][]Series{
		// single point, unnamed (no legend), non-integer X
		"single": {{X: []float64{0.5}, Y: []float64{3}}},
		// flat series: y range is widened rather than collapsing
		"flat": {{Name: "flat", X: []float64{1, 2, 3}, Y: []float64{5, 5, 5}}},
		// a series with no finite point gets a "(no data)" legend entry
		"allnan": {
			{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}},
			{Name: "b", X: []float64{1, 2}, Y: []float64{math.NaN(), math.NaN()}},
		},
		// unsorted X is drawn in X order
		"unsorted": {{Name: "u", X: []float64{3, 1, 2}, Y: []float64{3, 1, 2}}},
	}
	for name, ss := range cases {
		p := filepath.Join(dir, name+".png")
		if err := Line(p, name, "x", "y", ss); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		readPNG(t, p)
	}
}

func TestLineErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok := []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1, 2}}}
	for _, c := range []struct {
		path   string
		series []Series
		msg    string
	}{
		{filepath.Join(dir, "a.png"), nil, "no series"},
		{filepath.Join(dir, "a.png"), []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}, `series 0 ("s"): 2 X values but 1 Y values`},
		{filepath.Join(dir, "a.png"), []Series{ok[0], {Name: "t", X: []float64{math.NaN()}, Y: []float64{1}}}, `series 1 ("t"): X[0] is NaN`},
		{filepath.Join(dir, "a.png"), []Series{{Name: "s", X: []float64{1}, Y: []float64{math.Inf(1)}}}, "Y[0] is +Inf"},
		{filepath.Join(dir, "a.png"), []Series{{Name: "s", X: []float64{1}, Y: []float64{math.NaN()}}}, "no finite point"},
		{filepath.Join(dir, "a.svg"), ok, "must end in .png"},
		{"", ok, "empty output path"},
		{filepath.Join(dir, "missing", "a.png"), ok, "missing/a.png"},
	} {
		err := Line(c.path, "t", "x", "y", c.series)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Line(%q, %v): error %v, want one containing %q", c.path, c.series, err, c.msg)
		}
	}
	noTempLeft(t, dir, 0)
}

func TestIntegerTicks(t *testing.T) {
	t.Parallel()
	ticks := integerTicks{}.Ticks(0.7, 8.3)
	if len(ticks) != 8 || ticks[0].Value != 1 || ticks[7].Value != 8 || ticks[3].Label != "4" {
		t.Fatalf("ticks over [0.7, 8.3] = %v, want 1..8", ticks)
	}
	// Wide ranges label every k-th integer, never fractions.
	for _, tk := range (integerTicks{}).Ticks(0, 95) {
		if tk.Value != math.Trunc(tk.Value) {
			t.Fatalf("non-integer tick %v", tk.Value)
		}
	}
	if n := len(integerTicks{}.Ticks(0, 95)); n > 11 {
		t.Fatalf("%d ticks over [0, 95], want at most 11", n)
	}
	// No integer inside: falls back to ordinary ticks instead of none.
	if len(integerTicks{}.Ticks(0.2, 0.8)) == 0 {
		t.Fatal("no ticks over [0.2, 0.8]")
	}
}

func TestNiceTicks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{-0.83, 0.91, []string{"-0.75", "-0.50", "-0.25", "0.00", "0.25", "0.50", "0.75"}},
		{70.2, 74.9, []string{"71", "72", "73", "74"}},
		{0, 30, []string{"0", "5", "10", "15", "20", "25", "30"}},
		{0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
	} {
		ticks := niceTicks{}.Ticks(c.lo, c.hi)
		var got []string
		for _, tk := range ticks {
			if tk.Value < c.lo || tk.Value > c.hi {
				t.Errorf("[%v, %v]: tick %v outside the range", c.lo, c.hi, tk.Value)
			}
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("[%v, %v]: ticks %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}
