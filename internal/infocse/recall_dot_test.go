package infocse

import (
	"context"
	"strings"
	"testing"

	"repro/internal/rows"
)

// TestHeadlinesRecallByDot: ranked by the inner product, a long headline
// vector wins where the cosine calls a tie (pessimistic: a miss), so the
// two similarities give different recalls on the same set.
func TestHeadlinesRecallByDot(t *testing.T) {
	t.Parallel()
	docs := []rows.Document{
		{ID: "1", Headline: "aa", Sentences: []string{"a"}},   // (2,0) for (1,0)
		{ID: "2", Headline: "bbb", Sentences: []string{"ab"}}, // (0,3) for (1,1)
	}
	h, err := NewHeadlines(docs, "validation")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Cosine: document 2 scores 1/sqrt2 against both headlines (a tie,
	// counted against it); the inner product gives "bbb" 3 and "aa" 2.
	for sim, want := range map[Similarity]float64{Cosine: 50, Dot: 100} {
		got, err := h.RecallBy(ctx, bagEncoder{}, 1, sim)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: R@1 = %v, want %v", sim, got, want)
		}
	}
	if r, _ := h.Recall(ctx, bagEncoder{}, 1); r != 50 {
		t.Errorf("Recall (cosine) R@1 = %v, want 50", r)
	}
	if _, err := h.RecallBy(ctx, bagEncoder{}, 1, "euclid"); err == nil || !strings.Contains(err.Error(), `similarity "euclid"`) {
		t.Errorf("unknown similarity: %v", err)
	}
}
