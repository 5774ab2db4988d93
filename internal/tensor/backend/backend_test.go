package backend

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// goldenCase is one product computed by NumPy (testdata/gen_sgemm_golden.py).
type goldenCase struct {
	TransA, TransB bool
	M, N, K        int
	Alpha, Beta    float32
	Lda, Ldb, Ldc  int
	A, B, C        []float32
	Want           []float64
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	path := filepath.Join("testdata", "sgemm_golden.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g struct{ Cases []goldenCase }
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(g.Cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return g.Cases
}

// TestGolden runs every backend compiled into this test binary against
// NumPy's float64 results, including the padding columns of C, which must be
// left as they were.
func TestGolden(t *testing.T) {
	cases := loadGolden(t)
	for _, name := range Names() {
		b, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			for i, gc := range cases {
				c := slices.Clone(gc.C)
				b.Sgemm(gc.TransA, gc.TransB, gc.M, gc.N, gc.K, gc.Alpha, gc.A, gc.Lda, gc.B, gc.Ldb, gc.Beta, c, gc.Ldc)
				for x := range c {
					// float32 accumulation of k terms of unit variance.
					tol := 1e-6 * float64(gc.K+2) * (1 + math.Abs(gc.Want[x]))
					if d := math.Abs(float64(c[x]) - gc.Want[x]); !(d <= tol) {
						t.Fatalf("case %d (tA=%v tB=%v %dx%dx%d alpha=%v beta=%v): C[%d] = %v, NumPy %v",
							i, gc.TransA, gc.TransB, gc.M, gc.N, gc.K, gc.Alpha, gc.Beta, x, c[x], gc.Want[x])
					}
				}
			}
		})
	}
}

func TestByName(t *testing.T) {
	b, err := ByName("cpu")
	if err != nil || b.Name() != "cpu" {
		t.Fatalf("ByName(cpu) = %v, %v", b, err)
	}
	if _, err := ByName("cpu:1"); err == nil || !strings.Contains(err.Error(), "takes no argument") {
		t.Errorf("ByName(cpu:1) error = %v", err)
	}
	if _, err := ByName("tpu"); err == nil || !strings.Contains(err.Error(), `unknown backend "tpu"`) || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("ByName(tpu) error = %v", err)
	}
	// Backends not compiled in must name their build tag.
	for _, name := range []string{"openblas", "cuda"} {
		if slices.Contains(Names(), name) {
			continue
		}
		_, err := ByName(name)
		if err == nil || !strings.Contains(err.Error(), "-tags "+name) {
			t.Errorf("ByName(%s) without the tag: error = %v, want one naming -tags %s", name, err, name)
		}
	}
}

func TestUseCurrent(t *testing.T) {
	if Current().Name() != "cpu" {
		t.Fatalf("default backend %q, want cpu", Current().Name())
	}
	defer Use(nil)
	Use(fakeBackend{})
	if Current().Name() != "fake" {
		t.Fatalf("after Use, Current() = %q", Current().Name())
	}
}

type fakeBackend struct{ Backend }

func (fakeBackend) Name() string { return "fake" }

// TestGemmBatchStrided: the strided runs of a GEMM grid cover its
// products exactly once, in as few runs as the split allows: one for a
// single stride, else min(outer, inner).
func TestGemmBatchStrided(t *testing.T) {
	type prod struct{ a, b, c int }
	for _, g := range []GemmBatch{
		{},
		{Count: 1},
		{Count: 6, Outer: [3]int{5, 7, 11}},
		{Count: 6, Inner: 6, InnerStride: [3]int{2, 3, 4}},
		{Count: 12, Inner: 4, Outer: [3]int{8, 12, 20}, InnerStride: [3]int{2, 3, 5}},            // uniform: Outer = 4*InnerStride
		{Count: 2 * 12, Inner: 12, Outer: [3]int{96, 96, 400}, InnerStride: [3]int{8, 8, 25}},    // 2 sequences, 12 heads
		{Count: 32 * 4, Inner: 4, Outer: [3]int{512, 512, 256}, InnerStride: [3]int{16, 16, 64}}, // 32 sequences, 4 heads
	} {
		want := map[prod]int{}
		for i := 0; i < g.Calls(); i++ {
			a, b, c := g.Offsets(i)
			want[prod{a, b, c}]++
		}
		got := map[prod]int{}
		runs := g.Strided()
		for _, r := range runs {
			for j := 0; j < r.Count; j++ {
				got[prod{r.Base[0] + j*r.Stride[0], r.Base[1] + j*r.Stride[1], r.Base[2] + j*r.Stride[2]}]++
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: runs %+v cover %v, the grid is %v", g, runs, got, want)
		}
		inner := max(g.Inner, 1)
		outer := g.Calls() / inner
		wantRuns := min(inner, outer)
		if g.Inner > 1 && outer > 1 && g.Outer == [3]int{inner * g.InnerStride[0], inner * g.InnerStride[1], inner * g.InnerStride[2]} || inner == 1 || outer == 1 {
			wantRuns = 1
		}
		if len(runs) != wantRuns {
			t.Errorf("%+v: %d runs, want %d", g, len(runs), wantRuns)
		}
	}
}
