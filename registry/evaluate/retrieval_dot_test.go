package evaluate

import (
	"strings"
	"testing"

	"repro/internal/rows"
	"repro/registry"
)

// TestRetrievalStageSimilarity: similarity = "dot" ranks by the inner
// product. Bag-of-words vectors (one dimension per word): document 2
// ("w1 w2") ties its headline ("w2 w2 w2") with document 1's ("w1 w1")
// under the cosine, a tie counted against it, while the inner product
// gives its own headline 3 against 2; the default stays the cosine.
func TestRetrievalStageSimilarity(t *testing.T) {
	docs := []rows.Document{
		{ID: "1", Headline: "w1 w1", Sentences: []string{"w1"}},
		{ID: "2", Headline: "w2 w2 w2", Sentences: []string{"w1 w2"}},
	}
	data := artifact(t, registry.KindDocuments, registry.FileDocuments, docs)
	enc := newEncoder(t, 4096, "sparse")
	for _, c := range []struct {
		sim  string
		want float64
	}{{"", 50}, {"cosine", 50}, {"dot", 100}} {
		m, err := run(t, "evaluate.retrieval", &RetrievalParams{Query: "document", K: []int{1}, BatchSize: 4, Similarity: c.sim}, enc, data)
		if err != nil {
			t.Fatal(err)
		}
		if r1 := num(t, m, "r1"); r1 != c.want {
			t.Errorf("similarity %q: r1 = %v, want %v", c.sim, r1, c.want)
		}
	}
	if _, err := run(t, "evaluate.retrieval", &RetrievalParams{Query: "document", K: []int{1}, BatchSize: 4, Similarity: "l2"}, enc, data); err == nil ||
		!strings.Contains(err.Error(), `similarity: "l2" is not one of cosine, dot`) {
		t.Errorf("similarity l2: error %v", err)
	}
}
