package metrics

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

// golden mirrors testdata/golden.json, written by testdata/golden.py with
// numpy/scipy/scikit-learn. A null number stands for NaN.
type golden struct {
	Correlation []struct {
		Name     string     `json:"name"`
		XX       []*float64 `json:"x"`
		YY       []*float64 `json:"y"`
		Pearson  *float64   `json:"pearson"`
		Spearman *float64   `json:"spearman"`
		RankX    []float64  `json:"rank_x"`
	} `json:"correlation"`
	Cosine []struct {
		Name string    `json:"name"`
		AA   []float32 `json:"a"`
		BB   []float32 `json:"b"`
		Cos  float64   `json:"cos"`
	} `json:"cosine"`
	STS struct {
		Pairs []struct {
			Task   string    `json:"task"`
			Subset string    `json:"subset"`
			A      []float32 `json:"a"`
			B      []float32 `json:"b"`
			Gold   float64   `json:"gold"`
		} `json:"pairs"`
		Tasks map[string]struct {
			Spearman float64 `json:"spearman"`
			Pearson  float64 `json:"pearson"`
			N        int     `json:"n"`
			Subsets  map[string]struct {
				Spearman float64 `json:"spearman"`
				Pearson  float64 `json:"pearson"`
				N        int     `json:"n"`
			} `json:"subsets"`
		} `json:"tasks"`
		Avg      float64 `json:"avg"`
		STS12_16 float64 `json:"sts12_16"`
	} `json:"sts"`
	Round2 []struct {
		V float64 `json:"v"`
		R float64 `json:"r"`
	} `json:"round2"`
	Rerank struct {
		Queries []struct {
			Query    []float32   `json:"query"`
			Positive [][]float32 `json:"positive"`
			Negative [][]float32 `json:"negative"`
		} `json:"queries"`
		PerQuery []*struct {
			AP       float64   `json:"ap"`
			MRR10    float64   `json:"mrr10"`
			Scores   []float64 `json:"scores"`
			Relevant []bool    `json:"relevant"`
		} `json:"per_query"`
		MAP     float64 `json:"map"`
		MRR10   float64 `json:"mrr10"`
		Kept    int     `json:"kept"`
		Dropped int     `json:"dropped"`
	} `json:"rerank"`
	AveragePrecision []struct {
		Relevant []bool    `json:"relevant"`
		Scores   []float64 `json:"scores"`
		AP       float64   `json:"ap"`
	} `json:"average_precision"`
	Retrieval struct {
		Documents  [][][]float32 `json:"documents"`
		Headlines  [][]float32   `json:"headlines"`
		DocVectors [][]float32   `json:"doc_vectors"`
		Classes    []int         `json:"classes"`
		Ks         []int         `json:"ks"`
		DocToHead  retrievalGold `json:"doc_to_head"`
		DocToHeadC retrievalGold `json:"doc_to_head_classes"`
		HeadToDoc  retrievalGold `json:"head_to_doc"`
	} `json:"retrieval"`
	Geometry struct {
		A          [][]float32 `json:"a"`
		B          [][]float32 `json:"b"`
		Alignment  float64     `json:"alignment"`
		X          [][]float32 `json:"x"`
		Uniformity float64     `json:"uniformity"`
	} `json:"geometry"`
	Density struct {
		Sys    []float64 `json:"sys"`
		Gold   []float64 `json:"gold"`
		Levels []struct {
			Lo, Hi float64
			N      int     `json:"n"`
			Mean   float64 `json:"mean"`
			Var    float64 `json:"var"`
		} `json:"levels"`
	} `json:"density"`
}

type retrievalGold struct {
	Recall   map[string]float64 `json:"recall"`
	MeanRank float64            `json:"mean_rank"`
}

const tol = 1e-6

func loadGolden(t testing.TB) *golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("testdata/golden.json: %v", err)
	}
	return &g
}

func nanable(p []*float64) []float64 {
	out := make([]float64, len(p))
	for i, v := range p {
		if v == nil {
			out[i] = math.NaN()
		} else {
			out[i] = *v
		}
	}
	return out
}

func closeTo(t *testing.T, what string, got float64, want *float64) {
	t.Helper()
	if want == nil {
		if !math.IsNaN(got) {
			t.Errorf("%s = %v, want NaN", what, got)
		}
		return
	}
	if math.IsNaN(got) || math.Abs(got-*want) > tol {
		t.Errorf("%s = %.12g, want %.12g", what, got, *want)
	}
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	closeTo(t, what, got, &want)
}

func TestGoldenCorrelation(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	if len(g.Correlation) < 10 {
		t.Fatalf("only %d correlation cases in golden.json", len(g.Correlation))
	}
	for _, c := range g.Correlation {
		x, y := nanable(c.XX), nanable(c.YY)
		closeTo(t, c.Name+": Pearson", Pearson(x, y), c.Pearson)
		closeTo(t, c.Name+": Spearman", Spearman(x, y), c.Spearman)
		if c.RankX != nil {
			r := Rank(x)
			for i := range r {
				near(t, c.Name+": Rank["+strconv.Itoa(i)+"]", r[i], c.RankX[i])
			}
		}
	}
}

func TestGoldenCosine(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for _, c := range g.Cosine {
		near(t, c.Name, Cosine(c.AA, c.BB), c.Cos)
	}
}

func TestGoldenSTS(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	var pairs []ScoredPair
	for _, p := range g.STS.Pairs {
		pairs = append(pairs, ScoredPair{Task: p.Task, Subset: p.Subset, Sys: Cosine(p.A, p.B), Gold: p.Gold})
	}
	res, err := STS(pairs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != len(g.STS.Tasks) {
		t.Fatalf("%d tasks, want %d", len(res.Tasks), len(g.STS.Tasks))
	}
	for name, want := range g.STS.Tasks {
		got, ok := res.Tasks[name]
		if !ok {
			t.Fatalf("task %s missing", name)
		}
		near(t, name+" spearman", got.Spearman, want.Spearman)
		near(t, name+" pearson", got.Pearson, want.Pearson)
		if got.N != want.N {
			t.Errorf("%s n = %d, want %d", name, got.N, want.N)
		}
		if len(got.Subsets) != len(want.Subsets) {
			t.Errorf("%s: %d subsets, want %d", name, len(got.Subsets), len(want.Subsets))
		}
		for sn, ws := range want.Subsets {
			gs := got.Subsets[sn]
			near(t, name+"/"+sn+" spearman", gs.Spearman, ws.Spearman)
			near(t, name+"/"+sn+" pearson", gs.Pearson, ws.Pearson)
			if gs.N != ws.N {
				t.Errorf("%s/%s n = %d, want %d", name, sn, gs.N, ws.N)
			}
		}
	}
	if !res.HasAvg || !res.HasSTS12to16 {
		t.Fatalf("avg missing: %+v", res)
	}
	near(t, "avg", res.Avg, g.STS.Avg)
	near(t, "sts12_16", res.STS12to16, g.STS.STS12_16)
}

func TestGoldenRound2(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for _, c := range g.Round2 {
		if got := Round2(c.V); got != c.R {
			t.Errorf("Round2(%v) = %v, want %v (Python %%.2f)", c.V, got, c.R)
		}
	}
}

func TestGoldenAveragePrecision(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for i, c := range g.AveragePrecision {
		near(t, "case "+strconv.Itoa(i), AveragePrecision(c.Relevant, c.Scores), c.AP)
	}
	for i, q := range g.Rerank.PerQuery {
		if q == nil {
			continue
		}
		near(t, "query "+strconv.Itoa(i)+" AP", AveragePrecision(q.Relevant, q.Scores), q.AP)
		near(t, "query "+strconv.Itoa(i)+" MRR@10", ReciprocalRankAtK(q.Relevant, q.Scores, 10), q.MRR10)
	}
}

func TestGoldenRerank(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	var qs []RerankQuery
	for _, q := range g.Rerank.Queries {
		qs = append(qs, RerankQuery{Query: q.Query, Positive: q.Positive, Negative: q.Negative})
	}
	res, err := Rerank(qs, 10)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "MAP", res.MAP, g.Rerank.MAP)
	near(t, "MRR@10", res.MRR, g.Rerank.MRR10)
	if res.Queries != g.Rerank.Kept || res.Dropped != g.Rerank.Dropped {
		t.Errorf("kept %d dropped %d, want %d and %d", res.Queries, res.Dropped, g.Rerank.Kept, g.Rerank.Dropped)
	}
}

func TestGoldenRetrieval(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	r := g.Retrieval
	docs := make([][]float32, len(r.Documents))
	for i, d := range r.Documents {
		v, err := MeanVector(d)
		if err != nil {
			t.Fatal(err)
		}
		for j := range v {
			if v[j] != r.DocVectors[i][j] {
				t.Fatalf("MeanVector doc %d dim %d = %v, numpy %v", i, j, v[j], r.DocVectors[i][j])
			}
		}
		docs[i] = v
	}
	check := func(name string, q, c [][]float32, class []int, want retrievalGold) {
		res, err := Retrieval(q, c, r.Ks, class)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range r.Ks {
			near(t, name+" recall@"+strconv.Itoa(k), res.Recall[k], want.Recall[strconv.Itoa(k)])
		}
		near(t, name+" mean rank", res.MeanRank, want.MeanRank)
	}
	check("doc->headline", docs, r.Headlines, nil, r.DocToHead)
	check("doc->headline with duplicate classes", docs, r.Headlines, r.Classes, r.DocToHeadC)
	check("headline->doc", r.Headlines, docs, nil, r.HeadToDoc)
}

func TestGoldenGeometry(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	a, err := Alignment(g.Geometry.A, g.Geometry.B)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "alignment", a, g.Geometry.Alignment)
	u, err := Uniformity(g.Geometry.X)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "uniformity", u, g.Geometry.Uniformity)
}

func TestGoldenDensity(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	lv, err := CosineDensity(g.Density.Sys, g.Density.Gold)
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != len(g.Density.Levels) {
		t.Fatalf("%d levels, want %d", len(lv), len(g.Density.Levels))
	}
	for i, w := range g.Density.Levels {
		got := lv[i]
		if got.N != w.N {
			t.Errorf("level %s: n = %d, want %d", got.Name(), got.N, w.N)
		}
		near(t, got.Name()+" mean", got.Mean, w.Mean)
		near(t, got.Name()+" var", got.Var, w.Var)
	}
}
