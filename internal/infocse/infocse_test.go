package infocse

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"repro/internal/rows"
)

func TestPartitionEdgeCases(t *testing.T) {
	t.Parallel()
	if _, err := Partition([][]float32{{1}, {2}}, 0, Dot); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("k = 0: err = %v", err)
	}
	if _, err := Partition([][]float32{{1}, {2}}, 1, "euclid"); err == nil {
		t.Error("unknown similarity accepted")
	}
	if _, err := Partition([][]float32{{1, 2}, {2}}, 1, Dot); err == nil || !strings.Contains(err.Error(), "dimensions") {
		t.Errorf("ragged: err = %v", err)
	}
	if c, err := Partition(nil, 1, Dot); err != nil || len(c) != 0 {
		t.Errorf("no sentences: %v %v", c, err)
	}
	c, err := Partition([][]float32{{1, 0}}, 1, Dot)
	if err != nil || !reflect.DeepEqual(c, [][]int{{0}}) || len(ClusterPairs(c)) != 0 {
		t.Errorf("one sentence: %v %v", c, err)
	}
	// K beyond the neighbours keeps every edge.
	c, _ = Partition([][]float32{{1, 0}, {0, 1}, {-1, 0}, {0, -1}}, 10, Cosine)
	if !reflect.DeepEqual(c, [][]int{{0, 1, 2, 3}}) || len(ClusterPairs(c)) != 6 {
		t.Errorf("k >= n-1: %v", c)
	}
	// Two topics: {0, 2} and {1, 3} are each other's nearest; 4 joins 0.
	v := [][]float32{{1, 0.1}, {0, 1}, {0.9, 0}, {0.1, 1}, {2, 0.3}}
	c, _ = Partition(v, 1, Cosine)
	if !reflect.DeepEqual(c, [][]int{{0, 2, 4}, {1, 3}}) {
		t.Errorf("two topics: %v", c)
	}
	if got := ClusterPairs(c); !reflect.DeepEqual(got, []Pair{{0, 2}, {0, 4}, {2, 4}, {1, 3}}) {
		t.Errorf("pairs %v", got)
	}
	// NaN is an error, not a silent cluster.
	nan := float32(0)
	nan = nan / nan
	if _, err := Partition([][]float32{{1}, {nan}}, 1, Dot); err == nil {
		t.Error("NaN accepted")
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	var s Stats
	s.Add(1, nil, 0)
	s.Add(4, [][]int{{0, 1, 2}, {3}}, 3)
	s.Add(2, [][]int{{0}, {1}}, 0)
	want := Stats{Documents: 3, Skipped: 1, NoPairs: 1, Sentences: 6, Clusters: 4, Singletons: 3, Pairs: 3, Largest: 3}
	if s != want {
		t.Errorf("stats %+v, want %+v", s, want)
	}
	if got := s.ClustersPerDocument(); got != 2 {
		t.Errorf("clusters per document %v", got)
	}
}

func TestKMeansSeeded(t *testing.T) {
	t.Parallel()
	var x [][]float32
	for i := 0; i < 40; i++ {
		c := float32(i % 4 * 10)
		x = append(x, []float32{c + float32(i%3)*0.1, -c + float32(i%5)*0.1})
	}
	a, err := KMeans(x, 4, Dot, 7, 100)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KMeans(x, 4, Dot, 7, 100)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different clustering")
	}
	if !a.Converged || a.Empty != 0 {
		t.Errorf("converged %v empty %d", a.Converged, a.Empty)
	}
	// The four well separated groups are found whatever the seed.
	for seed := uint64(0); seed < 5; seed++ {
		r, _ := KMeans(x, 4, Dot, seed, 100)
		for i := range x {
			if r.Labels[i] != r.Labels[i%4] {
				t.Fatalf("seed %d: point %d not with its group", seed, i)
			}
		}
	}
	if _, err := KMeans(x[:3], 4, Dot, 1, 10); err == nil || !strings.Contains(err.Error(), "at least as many points") {
		t.Errorf("too few points: %v", err)
	}
	if _, err := KMeans(x, 0, Dot, 1, 10); err == nil {
		t.Error("k = 0 accepted")
	}
	// Identical points: seeding still returns k centers, one cluster is used.
	same := [][]float32{{1, 1}, {1, 1}, {1, 1}}
	r, err := KMeans(same, 2, Dot, 1, 10)
	if err != nil || r.Empty != 1 {
		t.Errorf("identical points: %+v %v", r, err)
	}
}

func TestGroupByCluster(t *testing.T) {
	t.Parallel()
	got := GroupByCluster([]int{7, 3, 7, 9, 3})
	if !reflect.DeepEqual(got, [][]int{{0, 2}, {1, 4}, {3}}) {
		t.Errorf("groups %v", got)
	}
}

func TestConponoAndICT(t *testing.T) {
	t.Parallel()
	p, err := ConponoPairs(4, 2)
	if err != nil || !reflect.DeepEqual(p, []Pair{{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 3}}) {
		t.Errorf("conpono %v %v", p, err)
	}
	if p, _ := ConponoPairs(1, 2); len(p) != 0 {
		t.Errorf("one sentence: %v", p)
	}
	if _, err := ConponoPairs(3, 0); err == nil {
		t.Error("window 0 accepted")
	}
	s := []string{"a", "b", "c", "d", "e"}
	for _, c := range []struct {
		i, w int
		want string
	}{{0, 1, "b"}, {2, 1, "b d"}, {2, 0, "a b d e"}, {4, 2, "c d"}} {
		if got := ICTContext(s, c.i, c.w); got != c.want {
			t.Errorf("ICTContext(%d, %d) = %q, want %q", c.i, c.w, got, c.want)
		}
	}
	if got := ICTContext([]string{"only"}, 0, 0); got != "" {
		t.Errorf("one sentence: %q", got)
	}
}

func TestFewShotSplit(t *testing.T) {
	t.Parallel()
	s, err := FewShotSplit(100, 10, 20, 42)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for name, part := range map[string][]int{"validation": s.Validation, "test": s.Test, "pool": s.Pool} {
		for _, i := range part {
			if prev, dup := seen[i]; dup {
				t.Fatalf("document %d in %s and %s", i, prev, name)
			}
			seen[i] = name
		}
	}
	if len(seen) != 100 || len(s.Validation) != 10 || len(s.Test) != 20 {
		t.Fatalf("sizes: %d %d %d", len(s.Validation), len(s.Test), len(s.Pool))
	}
	small, _ := s.Labeled(30)
	all, _ := s.Labeled(0)
	if len(small) != 30 || len(all) != 70 {
		t.Fatalf("labeled: %d %d", len(small), len(all))
	}
	in := map[int]bool{}
	for _, i := range all {
		in[i] = true
	}
	for _, i := range small {
		if !in[i] {
			t.Fatalf("labels 30 not a subset of all labels")
		}
	}
	if h := s.HeldIn(); len(h) != 90 {
		t.Errorf("held in: %d", len(h))
	}
	again, _ := FewShotSplit(100, 10, 20, 42)
	other, _ := FewShotSplit(100, 10, 20, 43)
	if !reflect.DeepEqual(s, again) || reflect.DeepEqual(s.Test, other.Test) {
		t.Error("split not determined by the seed")
	}
	if _, err := s.Labeled(71); err == nil {
		t.Error("more labels than the pool accepted")
	}
	if _, err := FewShotSplit(30, 10, 20, 1); err == nil || !strings.Contains(err.Error(), "leave none") {
		t.Errorf("too small: %v", err)
	}
}

// bagEncoder embeds a text as counts of the letters a-e: enough to make
// retrieval decidable by hand.
type bagEncoder struct{}

func (bagEncoder) Dim() int { return 5 }
func (bagEncoder) Encode(_ context.Context, ss []string) ([][]float32, error) {
	out := make([][]float32, len(ss))
	for i, s := range ss {
		v := make([]float32, 5)
		for _, r := range s {
			if r >= 'a' && r <= 'e' {
				v[r-'a']++
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestHeadlines(t *testing.T) {
	t.Parallel()
	docs := []rows.Document{
		{ID: "1", Headline: "aaa", Sentences: []string{"aa", "ab"}},
		{ID: "2", Headline: "bbb", Sentences: []string{"bb", "b"}},
		{ID: "3", Headline: "ccc", Sentences: []string{"aa"}}, // looks like document 1
	}
	h, err := NewHeadlines(docs, "validation")
	if err != nil {
		t.Fatal(err)
	}
	r1, err := h.Recall(context.Background(), bagEncoder{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Documents 1 and 2 find their headline first; 3 ranks "aaa" first.
	if want := 200.0 / 3; r1 != want {
		t.Errorf("R@1 = %v, want %v", r1, want)
	}
	if r3, _ := h.Recall(context.Background(), bagEncoder{}, 3); r3 != 100 {
		t.Errorf("R@3 = %v", r3)
	}
	docs[1].Headline = ""
	if _, err := NewHeadlines(docs, "validation"); err == nil || !strings.Contains(err.Error(), "no headline") {
		t.Errorf("missing headline: %v", err)
	}
	if _, err := NewHeadlines(docs[:1], "validation"); err == nil {
		t.Error("one document accepted")
	}
}
