package chunk

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func render(tags string, np, vp bool) string {
	ts := strings.Fields(tags)
	var parts []string
	for _, c := range Find(ts, np, vp) {
		parts = append(parts, fmt.Sprintf("%s[%d,%d)", c.Label, c.From, c.To))
	}
	return strings.Join(parts, " ")
}

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		tags   string
		np, vp bool
		want   string
	}{
		// "The old man can not run to the big house ."
		{"DET ADJ NOUN MD NEG VERB ADP DET ADJ NOUN .", true, false, "NP[0,3) NP[7,10)"},
		{"DET ADJ NOUN MD NEG VERB ADP DET ADJ NOUN .", false, true, "VP[3,6)"},
		{"DET ADJ NOUN MD NEG VERB ADP DET ADJ NOUN .", true, true, "NP[0,3) VP[3,6) NP[7,10)"},
		// "She wants to go home": pronoun NP, verb group across "to".
		{"PRON VERB PRT VERB NOUN", true, true, "NP[0,1) VP[1,4) NP[4,5)"},
		// "They gave up": trailing particle.
		{"PRON VERB PRT .", false, true, "VP[1,3)"},
		// Adjectives without a noun are not an NP; a lone determiner neither.
		{"DET ADJ ADJ .", true, false, ""},
		// "has already been done"
		{"VERB ADV VERB VERB", false, true, "VP[0,4)"},
		// Numbers before a noun: "three big dogs"
		{"NUM ADJ NOUN", true, false, "NP[0,3)"},
	} {
		if got := render(tc.tags, tc.np, tc.vp); got != tc.want {
			t.Errorf("Find(%q, np=%v, vp=%v) = %q, want %q", tc.tags, tc.np, tc.vp, got, tc.want)
		}
	}
}

// TestPickOne: MaskOne's draw keeps exactly one chunk of those found, each
// of them for some seed, the same one for the same generator state; none
// when there is none.
func TestPickOne(t *testing.T) {
	cs := Find(strings.Fields("DET ADJ NOUN MD NEG VERB ADP DET ADJ NOUN ."), true, true)
	if len(cs) != 3 {
		t.Fatalf("chunks %v", cs)
	}
	seen := map[Chunk]int{}
	for seed := uint64(0); seed < 60; seed++ {
		got := pickOne(cs, rand.New(rand.NewPCG(seed, 0)))
		if len(got) != 1 {
			t.Fatalf("seed %d: %d chunks drawn, want 1", seed, len(got))
		}
		if again := pickOne(cs, rand.New(rand.NewPCG(seed, 0))); again[0] != got[0] {
			t.Errorf("seed %d: drew %v, then %v", seed, got[0], again[0])
		}
		seen[got[0]]++
	}
	for _, c := range cs {
		if seen[c] < 5 {
			t.Errorf("chunk %v drawn %d times in 60 seeds: %v", c, seen[c], seen)
		}
	}
	if got := pickOne(nil, rand.New(rand.NewPCG(1, 2))); got != nil {
		t.Errorf("no chunks: drew %v", got)
	}
}
