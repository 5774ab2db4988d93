package syncse

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// TestStratifiedOrderRule: the rule of the doc, row by row, on small sets:
// genres and topics rotate in the order of their first row in perm, a row
// comes under the first topic whose turn finds it, exhausted genres and
// topics are skipped.
func TestStratifiedOrderRule(t *testing.T) {
	x := func(topics ...string) Stratum { return Stratum{Genre: "x", Topics: topics} }
	y := func(topics ...string) Stratum { return Stratum{Genre: "y", Topics: topics} }
	cases := []struct {
		strata []Stratum
		perm   []int
		want   []int
	}{
		// x: a -> 0, b -> 2, a -> 1, b -> 3; y: c -> 4, d -> 5; genres alternate.
		{[]Stratum{x("a"), x("a"), x("b"), x("b"), y("c"), y("d")}, identity(6), []int{0, 4, 2, 5, 1, 3}},
		// Row 0 names a and b: a's turn takes it, b's turn skips it and takes 2.
		{[]Stratum{x("a", "b"), x("a"), x("b")}, identity(3), []int{0, 2, 1}},
		// perm decides: y's row comes first, so y leads; within x, b (row 2,
		// before row 0 in perm) has the first turn.
		{[]Stratum{x("a"), x("a"), x("b"), y("c")}, []int{3, 2, 0, 1}, []int{3, 2, 0, 1}},
		// Rows without topics: one stratum per genre.
		{[]Stratum{x(), x(), y()}, identity(3), []int{0, 2, 1}},
	}
	for i, c := range cases {
		if got := StratifiedOrder(c.strata, c.perm); !reflect.DeepEqual(got, c.want) {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
	if got := StratifiedOrder(nil, nil); len(got) != 0 {
		t.Errorf("no rows: %v", got)
	}
}

// TestStratifiedOrderSpread: rows generated genre by genre (as
// synth.sentences writes them), one genre short; every prefix spreads over
// the genres and, within a genre, over its topics; the first rows of the
// input would hold one genre.
func TestStratifiedOrderSpread(t *testing.T) {
	topics := []string{"t0", "t1", "t2", "t3"}
	var strata []Stratum
	sizes := []int{400, 400, 400, 30}
	for g, n := range sizes {
		for j := 0; j < n; j++ {
			// Calls name two topics; the calls come topic by topic too.
			a := topics[(j*len(topics))/n]
			b := topics[(j*len(topics)/n+1)%len(topics)]
			strata = append(strata, Stratum{Genre: fmt.Sprint("g", g), Topics: []string{a, b}})
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	perm := rng.Perm(len(strata))
	order := StratifiedOrder(strata, perm)
	if sorted := slices.Sorted(slices.Values(order)); !reflect.DeepEqual(sorted, identity(len(strata))) {
		t.Fatal("not a permutation of the rows")
	}
	count := func(n int) map[string]int {
		c := map[string]int{}
		for _, i := range order[:n] {
			c[strata[i].Genre]++
		}
		return c
	}
	// 100 rows: 25 a genre; 400: g3 gives its 30, the others 123 or 124.
	if c := count(100); c["g0"] != 25 || c["g1"] != 25 || c["g2"] != 25 || c["g3"] != 25 {
		t.Errorf("100 rows by genre: %v", c)
	}
	c := count(400)
	if c["g3"] != 30 || c["g0"]+c["g1"]+c["g2"] != 370 {
		t.Errorf("400 rows by genre: %v", c)
	}
	for _, g := range []string{"g0", "g1", "g2"} {
		if c[g] < 123 || c[g] > 124 {
			t.Errorf("400 rows: %s has %d, want 123 or 124", g, c[g])
		}
	}
	// Within a genre every topic is named by a fair share of the first rows:
	// 40 rows of g0 (160 in all), each row naming two of four topics.
	perTopic := map[string]int{}
	for _, i := range order[:160] {
		if strata[i].Genre == "g0" {
			for _, tp := range strata[i].Topics {
				perTopic[tp]++
			}
		}
	}
	for _, tp := range topics {
		if perTopic[tp] < 10 {
			t.Errorf("160 rows: g0's topic %s named by %d rows, want at least 10 (%v)", tp, perTopic[tp], perTopic)
		}
	}
	// The first rows of the input, by contrast: one genre, two topics.
	if strata[0].Genre != strata[99].Genre {
		t.Fatal("fixture: the input is not genre by genre")
	}
	// Another permutation, another sample; the same, the same.
	if reflect.DeepEqual(StratifiedOrder(strata, rng.Perm(len(strata))), order) {
		t.Error("the order does not depend on the permutation")
	}
	if !reflect.DeepEqual(StratifiedOrder(strata, perm), order) {
		t.Error("the same permutation gave another order")
	}
}
