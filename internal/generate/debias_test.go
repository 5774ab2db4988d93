package generate

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// TestSelfDebiasReference checks SelfDebias against torch values computed
// the way DINO's released code debiases (testdata/debias_ref.py): lambda
// 100 with the 0.01 floor, one and two counterlabels, no floor, lambda 0.
func TestSelfDebiasReference(t *testing.T) {
	raw, err := os.ReadFile("testdata/debias_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Lambda, Epsilon float64
		Logits          [][]float32
		Want            []float64
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 4 {
		t.Fatalf("%d cases, want 4", len(cases))
	}
	for ci, c := range cases {
		d := &SelfDebias{Lambda: c.Lambda, Epsilon: c.Epsilon}
		rows := make([][]float32, len(c.Logits))
		for i, r := range c.Logits {
			rows[i] = slices.Clone(r)
		}
		if err := d.Process(&Step{Logits: rows}); err != nil {
			t.Fatal(err)
		}
		for j, w := range c.Want {
			if math.Abs(float64(rows[0][j])-w) > 1e-5*max(1, math.Abs(w)) {
				t.Errorf("case %d (lambda %v, epsilon %v, %d counterlabels): token %d: %v, want %v",
					ci, c.Lambda, c.Epsilon, len(c.Logits)-1, j, rows[0][j], w)
			}
		}
		for i := 1; i < len(rows); i++ {
			if !slices.Equal(rows[i], c.Logits[i]) {
				t.Errorf("case %d: counterlabel row %d was modified", ci, i)
			}
		}
	}
	// A group of one (label 1: no counterlabel) is left alone.
	row := []float32{1, 2, 3}
	if err := (&SelfDebias{Lambda: 100, Epsilon: 0.01}).Process(&Step{Logits: [][]float32{row}}); err != nil || !slices.Equal(row, []float32{1, 2, 3}) {
		t.Errorf("single member: %v, %v", row, err)
	}
}

// TestSelfDebiasGenerate runs SelfDebias in the engine, batched with
// lockstep groups: greedy decoding picks the label prompt's second choice
// where its first is far likelier under the counterlabel prompt, and the
// counterlabel sequence follows the label sequence token for token.
func TestSelfDebiasGenerate(t *testing.T) {
	m := newBigram(8, 5)
	m.table[1] = []float32{0, 3, 2.9, 0, 0, 0, 0, 0} // label prompt: 1, then 2
	m.table[2] = []float32{0, 0, 0, 0, 0, 0, 0, 3}
	m.table[6] = []float32{0, 5, 0, 0, 0, 0, 0, 0} // counterlabel prompt: 1
	m.table[7] = []float32{0, 0, 0, 0, 0, 0, 0, 3}
	prompts := [][]int{{1}, {6}, {1}}
	run := func(lambda float64) []Output {
		d := &SelfDebias{Lambda: lambda, Epsilon: 0.01}
		outs, err := Generate(ctx, m, prompts, Options{Sampling: Sampling{Temperature: 0, TopP: 1}, MaxNewTokens: 2, EOS: -1,
			Processors: []Processor{d}, Groups: [][]int{{0, 1}}, Lockstep: true})
		if err != nil {
			t.Fatal(err)
		}
		return outs
	}
	outs := run(100)
	if !slices.Equal(outs[0].Tokens, []int{2, 7}) || !slices.Equal(outs[1].Tokens, []int{2, 7}) {
		t.Errorf("lambda 100: label %v, counterlabel %v, want [2 7] both", outs[0].Tokens, outs[1].Tokens)
	}
	// Prompt 2 is the same text as prompt 0 outside any group: undebiased.
	if !slices.Equal(outs[2].Tokens, []int{1, argmax(m.table[1])}) {
		t.Errorf("ungrouped prompt: %v", outs[2].Tokens)
	}
	if outs := run(0); outs[0].Tokens[0] != 1 {
		t.Errorf("lambda 0: first token %d, want 1 (no debiasing)", outs[0].Tokens[0])
	}
	for _, bad := range []SelfDebias{{Lambda: -1}, {Lambda: math.NaN()}, {Lambda: 1, Epsilon: 2}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
