package metrics

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSTSErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		pairs []ScoredPair
		want  string
	}{
		{"constant similarities", []ScoredPair{
			{Task: "sts12", Subset: "MSRpar", Sys: 0.5, Gold: 1},
			{Task: "sts12", Subset: "MSRpar", Sys: 0.5, Gold: 2},
			{Task: "sts12", Subset: "MSRpar", Sys: 0.5, Gold: 3},
		}, "task sts12: all 3 similarities are equal"},
		{"constant subset", []ScoredPair{
			{Task: "sts13", Subset: "FNWN", Sys: 0.1, Gold: 1},
			{Task: "sts13", Subset: "FNWN", Sys: 0.2, Gold: 1},
			{Task: "sts13", Subset: "OnWN", Sys: 0.3, Gold: 2},
			{Task: "sts13", Subset: "OnWN", Sys: 0.4, Gold: 3},
		}, "task sts13, subset FNWN: all 2 gold scores are equal"},
		{"one pair", []ScoredPair{{Task: "stsb", Subset: "test", Sys: 0.1, Gold: 1}}, "task stsb: 1 pair(s)"},
		{"two splits", []ScoredPair{
			{Task: "stsb", Subset: "dev", Sys: 0.1, Gold: 1},
			{Task: "stsb", Subset: "dev", Sys: 0.2, Gold: 2},
			{Task: "stsb", Subset: "test", Sys: 0.3, Gold: 3},
			{Task: "stsb", Subset: "test", Sys: 0.4, Gold: 4},
		}, "task stsb: pairs from 2 splits [dev test]"},
		{"NaN similarity", []ScoredPair{
			{Task: "sickr", Subset: "test", Sys: math.NaN(), Gold: 1},
			{Task: "sickr", Subset: "test", Sys: 0.2, Gold: 2},
			{Task: "sickr", Subset: "test", Sys: 0.3, Gold: 3},
		}, "task sickr: correlation is NaN"},
	}
	for _, c := range cases {
		_, err := STS(c.pairs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestSTSAvgNeedsAllSeven(t *testing.T) {
	t.Parallel()
	var pairs []ScoredPair
	for _, task := range STSSeven[:6] {
		for i := 0; i < 5; i++ {
			pairs = append(pairs, ScoredPair{Task: task, Subset: "x", Sys: float64(i), Gold: float64(i * i)})
		}
	}
	res, err := STS(pairs)
	if err != nil {
		t.Fatal(err)
	}
	if res.HasAvg {
		t.Errorf("Avg reported without sickr: %v", res.Avg)
	}
	if !res.HasSTS12to16 || res.STS12to16 != 100 {
		t.Errorf("STS12-16 = %v (present %v), want 100", res.STS12to16, res.HasSTS12to16)
	}
	if got := res.Tasks["stsb"].Spearman; math.Abs(got-100) > 1e-9 {
		t.Errorf("monotone stsb Spearman = %v, want 100", got)
	}
}

func TestRerankAllDropped(t *testing.T) {
	t.Parallel()
	_, err := Rerank([]RerankQuery{{Query: []float32{1}, Positive: [][]float32{{1}}}}, 10)
	if err == nil || !strings.Contains(err.Error(), "none of 1 queries") {
		t.Errorf("error %v", err)
	}
}

func TestRetrievalErrorsAndCollapse(t *testing.T) {
	t.Parallel()
	if _, err := Retrieval([][]float32{{1}}, [][]float32{{1}, {2}}, []int{1}, nil); err == nil {
		t.Error("no error for 1 query and 2 candidates")
	}
	if _, err := Retrieval([][]float32{{1}}, [][]float32{{1}}, []int{0}, nil); err == nil {
		t.Error("no error for k = 0")
	}
	// A collapsed encoder (every vector the same) must get no credit from
	// index order: pessimistic ties rank every counterpart last.
	same := [][]float32{{1, 1}, {1, 1}, {1, 1}, {1, 1}}
	res, err := Retrieval(same, same, []int{1, 3, 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Recall[1] != 0 || res.Recall[3] != 0 || res.Recall[4] != 100 {
		t.Errorf("collapsed recall = %v, want 0/0/100", res.Recall)
	}
}

func TestDensityErrors(t *testing.T) {
	t.Parallel()
	if _, err := CosineDensity([]float64{0.1}, []float64{5.5}); err == nil || !strings.Contains(err.Error(), "pair 0: gold score 5.5") {
		t.Errorf("error %v", err)
	}
	lv, err := CosineDensity([]float64{0.2, 0.4}, []float64{0.5, 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if lv[0].N != 2 || math.Abs(lv[0].Mean-0.3) > 1e-12 || math.Abs(lv[0].Var-0.01) > 1e-12 || lv[1].N != 0 || !math.IsNaN(lv[1].Mean) {
		t.Errorf("levels %+v", lv)
	}
}

func TestGeometryErrors(t *testing.T) {
	t.Parallel()
	if _, err := Uniformity([][]float32{{1}}); err == nil {
		t.Error("uniformity of one vector gave no error")
	}
	if _, err := Alignment(nil, nil); err == nil {
		t.Error("alignment of no pairs gave no error")
	}
	// Identical unit directions: alignment 0; two opposite points: distance^2 4.
	a, _ := Alignment([][]float32{{1, 0}}, [][]float32{{3, 0}})
	u, _ := Uniformity([][]float32{{1, 0}, {-2, 0}})
	if a != 0 || math.Abs(u-(-8)) > 1e-12 {
		t.Errorf("alignment %v (want 0), uniformity %v (want -8)", a, u)
	}
}

// BenchmarkSTS20k measures the STS metric code on 20,000 pairs of 768-d
// vectors: the cosines plus the protocol (ranks, correlations, subsets).
func BenchmarkSTS20k(b *testing.B) {
	const n, dim = 20000, 768
	rng := rand.New(rand.NewPCG(1, 2))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	left, right := make([][]float32, n), make([][]float32, n)
	gold := make([]float64, n)
	tasks := []string{"sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"}
	for i := range left {
		left[i], right[i] = vec(), vec()
		gold[i] = math.Round(rng.Float64()*50) / 10
	}
	b.ResetTimer()
	for b.Loop() {
		pairs := make([]ScoredPair, n)
		for i := range pairs {
			task := tasks[i%len(tasks)]
			sub := "test"
			if i%len(tasks) < 5 {
				sub = []string{"a", "b", "c"}[i%3]
			}
			pairs[i] = ScoredPair{Task: task, Subset: sub, Sys: Cosine(left[i], right[i]), Gold: gold[i]}
		}
		if _, err := STS(pairs); err != nil {
			b.Fatal(err)
		}
	}
}

func randomVectors(n, dim int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = float32(rng.NormFloat64())
		}
	}
	return out
}

// BenchmarkUniformitySTSB is uniformity over the ~2,700 distinct sentences
// of the STS-B test split at BERT-base width (3.6M pairs).
func BenchmarkUniformitySTSB(b *testing.B) {
	x := randomVectors(2700, 768, 1)
	for b.Loop() {
		if _, err := Uniformity(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRetrievalBBC is recall@5/10/20 over the 2,225 BBC documents and
// headlines at BERT-base width.
func BenchmarkRetrievalBBC(b *testing.B) {
	q, c := randomVectors(2225, 768, 1), randomVectors(2225, 768, 2)
	for b.Loop() {
		if _, err := Retrieval(q, c, []int{5, 10, 20}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
