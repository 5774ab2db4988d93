package gense

import (
	"reflect"
	"strings"
	"testing"

	"repro/internal/retrieve"
)

func TestRetrievePairs(t *testing.T) {
	t.Parallel()
	corpus := []string{
		"A man getting ready to fly a kite.",
		"A young man getting ready to release a red kite.",
		"A young man getting ready to release a red kite.", // exact duplicate
		"One of the hotel rooms",
		"The grand hotel, one of the hotel rooms",
		"Stocks fell on Monday.",
	}
	pairs, c, err := RetrievePairs(corpus, corpus, retrieve.DefaultParams, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		if p.Anchor == p.Partner {
			t.Errorf("pair %+v pairs a sentence with itself or its duplicate", p)
		}
	}
	// 0 finds 1 (tied with its duplicate 2, the lower index wins); 1 and 2
	// find 0, repeats of 0->1; 3 finds 4 and 4 finds 3, a repeat; the
	// stocks sentence shares no word with any other: no hit.
	want := []RetrievedPair{
		{Anchor: corpus[0], Partner: corpus[1], Rank: 1},
		{Anchor: corpus[3], Partner: corpus[4], Rank: 1},
	}
	for i := range pairs {
		pairs[i].BM25 = 0
	}
	if !reflect.DeepEqual(pairs, want) {
		t.Fatalf("pairs %+v\nwant %+v", pairs, want)
	}
	if c != (RetrievalCounts{Queries: 6, NoHit: 1, Repeated: 3, Candidates: 2}) {
		t.Fatalf("counts %+v", c)
	}
}

func TestRetrievePairsBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q, c []string
		k    int
		want string
	}{
		{[]string{"a b"}, nil, 3, "empty corpus"},
		{nil, []string{"a b"}, 3, "no sentences"},
		{[]string{"a b"}, []string{"a b"}, 0, "top_k = 0"},
	} {
		_, _, err := RetrievePairs(tc.q, tc.c, retrieve.DefaultParams, tc.k)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RetrievePairs(%q, %q, %d) = %v, want %q", tc.q, tc.c, tc.k, err, tc.want)
		}
	}
}

func TestKeepEntailed(t *testing.T) {
	t.Parallel()
	keep, c := KeepEntailed([]float64{0.95, 0.5, 0.9, 0.1}, 0.9)
	if !reflect.DeepEqual(keep, []bool{true, false, true, false}) {
		t.Fatalf("keep %v", keep)
	}
	if c.Kept != 2 || c.Labelled != 4 || c.PassRate != 0.5 || c.MeanPTrue != (0.95+0.5+0.9+0.1)/4 {
		t.Fatalf("counts %+v", c)
	}
}
