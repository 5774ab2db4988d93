package plot

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"repro/internal/datadir/datadirtest"
)

func syntheticLevels() []Group {
	r := rand.New(rand.NewPCG(7, 8))
	gs := make([]Group, 5)
	for k := range gs {
		gs[k].Name = strconv.Itoa(k) + "-" + strconv.Itoa(k+1)
		for i := 0; i < 100; i++ {
			gs[k].Values = append(gs[k].Values, math.Tanh(0.2*float64(k)+0.3*r.NormFloat64()))
		}
	}
	return gs
}

func TestDensityPNG(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "fig5.png")
	if err := Density(path, "Cosine density", "cosine similarity", syntheticLevels()); err != nil {
		t.Fatal(err)
	}
	d := readPNG(t, path)
	for i := 0; i < 5; i++ {
		if n := countNear(d.img, palette[i]); n < 50 {
			t.Errorf("group %d colour %v covers only %d pixels", i, palette[i], n)
		}
	}
	noTempLeft(t, dir, 1)
}

func TestDensityDeterministic(t *testing.T) {
	t.Parallel()
	gs := syntheticLevels()
	sameBytes(t, func(p string) error { return Density(p, "Cosine density", "cosine", gs) })
}

// An empty group draws no curve (only a legend note); a constant group
// still draws a peak through the fallback bandwidth.
func TestDensityEmptyAndConstantGroups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f.png")
	gs := []Group{
		{Name: "spread", Values: []float64{-0.2, 0.1, 0.3, 0.35, 0.6}},
		{Name: "empty"},
		{Name: "constant", Values: []float64{0.9, 0.9, 0.9}},
		{Name: "single", Values: []float64{-0.5}},
	}
	if err := Density(path, "t", "cosine", gs); err != nil {
		t.Fatal(err)
	}
	d := readPNG(t, path)
	for _, i := range []int{0, 2, 3} {
		if n := countNear(d.img, palette[i]); n < 50 {
			t.Errorf("group %d (%s) colour covers only %d pixels", i, gs[i].Name, n)
		}
	}
	if n := countNear(d.img, palette[1]); n != 0 {
		t.Errorf("empty group's colour appears on %d pixels", n)
	}

	// Every value equal across all groups: the axis is widened, no error.
	if err := Density(path, "t", "cosine", []Group{{Name: "c", Values: []float64{1, 1}}}); err != nil {
		t.Fatal(err)
	}
	readPNG(t, path)
}

func TestDensityErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		path   string
		groups []Group
		msg    string
	}{
		{filepath.Join(dir, "a.png"), nil, "no groups"},
		{filepath.Join(dir, "a.png"), []Group{{Name: "x"}, {Name: "y"}}, "every group is empty"},
		{filepath.Join(dir, "a.png"), []Group{{Name: "x", Values: []float64{0.1, math.NaN()}}}, `group 0 ("x"): value 1 is NaN`},
		{filepath.Join(dir, "a.jpg"), []Group{{Name: "x", Values: []float64{0.1}}}, "must end in .png"},
	} {
		err := Density(c.path, "t", "x", c.groups)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Density(%q): error %v, want one containing %q", c.path, err, c.msg)
		}
	}
	noTempLeft(t, dir, 0)
}

// TestDensitySTSB draws Figure 5's layout from the real STS-B test split,
// with a bag-of-words cosine standing in for a trained encoder: higher gold
// levels must have higher mean cosine, and the figure must render.
func TestDensitySTSB(t *testing.T) {
	t.Parallel()
	path := filepath.Join(datadirtest.Dir(t), "sts", "STSB", "test.tsv")
	gold, sim := readSTSBagOfWords(t, path)
	if len(gold) != 1379 {
		t.Fatalf("%s: %d pairs, want 1379", path, len(gold))
	}
	groups, err := SimilarityLevels(gold, sim)
	if err != nil {
		t.Fatal(err)
	}
	prev := math.Inf(-1)
	for _, g := range groups {
		if len(g.Values) == 0 {
			t.Fatalf("level %s is empty", g.Name)
		}
		var m float64
		for _, v := range g.Values {
			m += v
		}
		m /= float64(len(g.Values))
		if m <= prev {
			t.Errorf("level %s mean cosine %.3f not above the previous level's %.3f", g.Name, m, prev)
		}
		prev = m
	}
	out := filepath.Join(t.TempDir(), "stsb.png")
	if err := Density(out, "STS-B test, bag-of-words cosine", "cosine similarity", groups); err != nil {
		t.Fatal(err)
	}
	readPNG(t, out)
}

// readSTSBagOfWords reads an STS TSV (header, then score<TAB>s1<TAB>s2) and
// returns the gold scores and the cosine of lowercased word-count vectors.
func readSTSBagOfWords(t *testing.T, path string) (gold, sim []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 {
			t.Fatalf("%s:%d: %d columns, want 3", path, line, len(cols))
		}
		g, err := strconv.ParseFloat(cols[0], 64)
		if err != nil {
			t.Fatalf("%s:%d: score: %v", path, line, err)
		}
		gold = append(gold, g)
		sim = append(sim, bowCosine(cols[1], cols[2]))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return gold, sim
}

func bowCosine(a, b string) float64 {
	count := func(s string) map[string]float64 {
		m := map[string]float64{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		}) {
			m[w]++
		}
		return m
	}
	ca, cb := count(a), count(b)
	var dot, na, nb float64
	for w, x := range ca {
		dot += x * cb[w]
		na += x * x
	}
	for _, y := range cb {
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
