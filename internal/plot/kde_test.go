package plot

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKDEHandComputed(t *testing.T) {
	t.Parallel()
	sample := []float64{0, 1, 2}
	// f(0) with h = 1: (phi(0) + phi(1) + phi(2)) / 3
	//   = (0.3989422804 + 0.2419707245 + 0.0539909665) / 3 = 0.2316346571
	got := KDE(sample, 1, []float64{0})[0]
	if math.Abs(got-0.2316346571) > 1e-9 {
		t.Fatalf("KDE({0,1,2}, h=1) at 0 = %.10f, want 0.2316346571", got)
	}
	// f(1.5) with h = 0.5: (phi(3) + phi(1) + phi(1)) / (3 * 0.5)
	//   = (0.0044318484 + 2 * 0.2419707245) / 1.5 = 0.3255821983
	got = KDE(sample, 0.5, []float64{1.5})[0]
	if math.Abs(got-0.3255821983) > 1e-9 {
		t.Fatalf("KDE({0,1,2}, h=0.5) at 1.5 = %.10f, want 0.3255821983", got)
	}
}

func TestSilvermanHandComputed(t *testing.T) {
	t.Parallel()
	// {0,1,2}: s = 1, quartiles 0.5 and 1.5 so IQR/1.34 = 0.7462686567,
	// h = 0.9 * 0.7462686567 * 3^(-1/5) = 0.6716417910 * 0.8027415617.
	want := 0.9 / 1.34 * math.Pow(3, -0.2)
	if got := Silverman([]float64{2, 0, 1}); math.Abs(got-want) > 1e-12 {
		t.Fatalf("Silverman({0,1,2}) = %v, want %v", got, want)
	}
	if math.Abs(want-0.5391547803) > 1e-9 {
		t.Fatalf("hand value drifted: %v", want)
	}
}

func TestSilvermanDegenerate(t *testing.T) {
	t.Parallel()
	for _, s := range [][]float64{nil, {0.3}, {0.7, 0.7, 0.7}} {
		if h := Silverman(s); h != 0 {
			t.Errorf("Silverman(%v) = %v, want 0 (no spread)", s, h)
		}
	}
}

type golden struct {
	Name      string    `json:"name"`
	Sample    []float64 `json:"sample"`
	Bandwidth float64   `json:"bandwidth"`
	At        []float64 `json:"at"`
	Density   []float64 `json:"density"`
}

// TestKDEGolden compares with NumPy/SciPy (testdata/kde_golden.py).
func TestKDEGolden(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "kde_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []golden
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 5 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		h := Silverman(c.Sample)
		if math.Abs(h-c.Bandwidth) > 1e-12*math.Max(1, c.Bandwidth) {
			t.Errorf("%s: bandwidth %v, scipy/numpy %v", c.Name, h, c.Bandwidth)
		}
		got := KDE(c.Sample, c.Bandwidth, c.At)
		for i := range got {
			if math.Abs(got[i]-c.Density[i]) > 1e-10*math.Max(1, c.Density[i]) {
				t.Errorf("%s: density at %v = %v, scipy %v", c.Name, c.At[i], got[i], c.Density[i])
			}
		}
	}
}

func TestKDEIntegratesToOne(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	sample := make([]float64, 300)
	for i := range sample {
		sample[i] = math.Tanh(r.NormFloat64()) // cosine-like, in (-1, 1)
	}
	h := Silverman(sample)
	if !(h > 0) {
		t.Fatalf("bandwidth %v", h)
	}
	lo, hi := -1-6*h, 1+6*h
	xs := Grid(lo, hi, 4001)
	ys := KDE(sample, h, xs)
	var area float64
	for k := 1; k < len(xs); k++ {
		area += (xs[k] - xs[k-1]) * (ys[k] + ys[k-1]) / 2
	}
	if math.Abs(area-1) > 1e-4 {
		t.Fatalf("trapezoid integral of KDE = %v, want 1", area)
	}
}

func TestKDEEmptyOrBadBandwidth(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s []float64
		h float64
	}{{nil, 1}, {[]float64{1}, 0}, {[]float64{1}, math.NaN()}} {
		for _, v := range KDE(c.s, c.h, []float64{0, 1}) {
			if v != 0 {
				t.Errorf("KDE(%v, %v) = %v, want zeros", c.s, c.h, v)
			}
		}
	}
}

func TestGrid(t *testing.T) {
	t.Parallel()
	xs := Grid(-1, 1, 5)
	want := []float64{-1, -0.5, 0, 0.5, 1}
	for i := range want {
		if xs[i] != want[i] {
			t.Fatalf("Grid(-1,1,5) = %v, want %v", xs, want)
		}
	}
}

func TestSimilarityLevels(t *testing.T) {
	t.Parallel()
	gold := []float64{0, 0.99, 1, 2.5, 3.999, 4, 5}
	sim := []float64{.1, .2, .3, .4, .5, .6, .7}
	gs, err := SimilarityLevels(gold, sim)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{"0-1": {.1, .2}, "1-2": {.3}, "2-3": {.4}, "3-4": {.5}, "4-5": {.6, .7}}
	if len(gs) != 5 {
		t.Fatalf("%d levels", len(gs))
	}
	for _, g := range gs {
		w := want[g.Name]
		if len(g.Values) != len(w) {
			t.Fatalf("level %s = %v, want %v", g.Name, g.Values, w)
		}
		for i := range w {
			if g.Values[i] != w[i] {
				t.Fatalf("level %s = %v, want %v", g.Name, g.Values, w)
			}
		}
	}

	for _, c := range []struct {
		gold, sim []float64
		msg       string
	}{
		{[]float64{1, 2}, []float64{1}, "2 gold scores but 1"},
		{[]float64{1, 5.5}, []float64{1, 1}, "gold score 1 is 5.5"},
		{[]float64{-0.1}, []float64{1}, "gold score 0 is -0.1"},
		{[]float64{math.NaN()}, []float64{1}, "gold score 0 is NaN"},
	} {
		_, err := SimilarityLevels(c.gold, c.sim)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("SimilarityLevels(%v, %v) error %v, want one containing %q", c.gold, c.sim, err, c.msg)
		}
	}
}
