package generate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var ctx = context.Background()

func TestGreedy(t *testing.T) {
	m := newBigram(12, 1)
	prompts := [][]int{{3}, {1, 7, 2}, {5, 5}}
	outs, err := Generate(ctx, m, prompts, Options{Sampling: Sampling{TopP: 1}, MaxNewTokens: 6, EOS: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		last := p[len(p)-1]
		var want []int
		for k := 0; k < 6; k++ {
			last = argmax(m.table[last])
			want = append(want, last)
		}
		if !slices.Equal(outs[i].Tokens, want) || outs[i].Stop != StopLength || outs[i].Prompt != i {
			t.Errorf("prompt %d: %+v, want tokens %v and stop length", i, outs[i], want)
		}
	}
	if m.starts != 1 {
		t.Errorf("%d Start calls for one batch", m.starts)
	}
}

// TestReproducible: the same seed gives the same samples whatever the batch
// size; another seed gives others; samples of one prompt differ.
func TestReproducible(t *testing.T) {
	m := newBigram(30, 2)
	prompts := [][]int{{1}, {2, 3}, {4}, {5, 6, 7}, {8}}
	o := Options{Sampling: Sampling{Temperature: 1, TopP: 1}, MaxNewTokens: 12, Samples: 3, EOS: 0, Seed: 42}
	a, err := Generate(ctx, m, prompts, o)
	if err != nil {
		t.Fatal(err)
	}
	o.BatchSize = 4 // chunks of one prompt's three samples
	b, _ := Generate(ctx, m, prompts, o)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("outputs depend on the batch size")
	}
	o.Seed = 43
	c, _ := Generate(ctx, m, prompts, o)
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 42 and 43 gave the same outputs")
	}
	if slices.Equal(a[0].Tokens, a[1].Tokens) && slices.Equal(a[1].Tokens, a[2].Tokens) {
		t.Error("three samples of prompt 0 are identical")
	}
	for i, out := range a {
		if out.Prompt != i/3 || out.Sample != i%3 {
			t.Errorf("output %d is prompt %d sample %d", i, out.Prompt, out.Sample)
		}
		if slices.Contains(out.Tokens, 0) || (out.Stop == StopEOS) == (len(out.Tokens) == 12) {
			t.Errorf("output %d: %+v (EOS 0 must end the sequence and not appear)", i, out)
		}
	}
}

// TestTopKTopP checks the filtering rules on a fixed distribution:
// frequencies over many streams match the renormalised kept mass, and
// excluded tokens never appear.
func TestTopKTopP(t *testing.T) {
	row := []float32{2, 1.5, 0.3, 1.9, -1, 0.8, 1.0}
	p := softmax64(row) // order by logit: 0, 3, 1, 6, 5, 2, 4
	for _, tc := range []struct {
		s    Sampling
		keep []int
	}{
		{Sampling{Temperature: 1, TopK: 3, TopP: 1}, []int{0, 3, 1}},
		{Sampling{Temperature: 1, TopP: 0.5}, []int{0, 3}},
		{Sampling{Temperature: 1, TopK: 5, TopP: 0.9}, nil},
		{Sampling{Temperature: 1, TopK: 1, TopP: 1}, []int{0}},
		{Sampling{Temperature: 1, TopP: 1e-9}, []int{0}},
		{Sampling{Temperature: 0.5, TopK: 2, TopP: 1}, []int{0, 3}},
	} {
		keep := tc.keep
		if keep == nil { // top-5, then keep while the mass above < 0.9 of the top-5 mass
			order := []int{0, 3, 1, 6, 5}
			var z, above float64
			for _, j := range order {
				z += p[j]
			}
			for _, j := range order {
				if above >= 0.9*z {
					break
				}
				keep = append(keep, j)
				above += p[j]
			}
		}
		// Expected frequencies: the tempered softmax over the kept tokens.
		tempered := make([]float32, len(row))
		for j, v := range row {
			tempered[j] = v / float32(tc.s.Temperature)
		}
		pt := softmax64(tempered)
		var z float64
		for _, j := range keep {
			z += pt[j]
		}
		sm := sampler{s: tc.s}
		counts := make([]int, len(row))
		const n = 20000
		for i := 0; i < n; i++ {
			counts[sm.choose(slices.Clone(row), Stream(7, i, 0))]++
		}
		for j, c := range counts {
			want := 0.0
			if slices.Contains(keep, j) {
				want = pt[j] / z
			}
			if want == 0 && c > 0 {
				t.Errorf("%+v: token %d drawn %d times, but it is filtered out", tc.s, j, c)
			}
			if got := float64(c) / n; math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/n)+1e-9 {
				t.Errorf("%+v: token %d frequency %.4f, want %.4f", tc.s, j, got, want)
			}
		}
	}
}

// TestTopPBoundary: the nucleus rule at its edge (transformers' "keep
// while the mass above is below p").
func TestTopPBoundary(t *testing.T) {
	l := func(p ...float64) []float32 {
		r := make([]float32, len(p))
		for i, v := range p {
			r[i] = float32(math.Log(v))
		}
		return r
	}
	row := l(0.5, 0.25, 0.125, 0.125)
	for _, tc := range []struct {
		p    float64
		keep int
	}{{0.5, 1}, {0.51, 2}, {0.75, 2}, {0.76, 3}, {1, 4}} {
		sm := sampler{s: Sampling{Temperature: 1, TopP: tc.p}}
		seen := map[int]bool{}
		for i := 0; i < 3000; i++ {
			seen[sm.choose(slices.Clone(row), Stream(1, i, 0))] = true
		}
		if len(seen) != tc.keep {
			t.Errorf("top_p %v: drew %d distinct tokens, want %d", tc.p, len(seen), tc.keep)
		}
	}
}

func TestPenalties(t *testing.T) {
	m := newBigram(6, 3)
	for j := range m.table {
		m.table[j] = []float32{5, 4, 3, 2, 1, 0} // greedy always picks 0
	}
	outs, err := Generate(ctx, m, [][]int{{1}}, Options{Sampling: Sampling{TopP: 1, FrequencyPenalty: 2, PresencePenalty: 0.5}, MaxNewTokens: 6, EOS: -1})
	if err != nil {
		t.Fatal(err)
	}
	// 0 (5), then 0 is 5-2.5=2.5 < 4: 1, then 0 2.5 vs 1 1.5 vs 2 3: 2, ...
	if want := []int{0, 1, 2, 0, 3, 1}; !slices.Equal(outs[0].Tokens, want) {
		t.Errorf("penalised greedy: %v, want %v", outs[0].Tokens, want)
	}
}

// decoder is a toy tokenizer: token j decodes to words[j].
func decoder(words []string) func([]int) string {
	return func(ids []int) string {
		var b strings.Builder
		for _, id := range ids {
			b.WriteString(words[id])
		}
		return b.String()
	}
}

// TestStops: a stop string that only appears in the decoded text (it
// straddles a token or sits inside one), EOS, the context window.
func TestStops(t *testing.T) {
	words := []string{"<eos>", " a", " b\"", "c", "\"d", " e"}
	m := newBigram(len(words), 4)
	set := func(from int, to int) {
		m.table[from] = make([]float32, len(words))
		m.table[from][to] = 10
	}
	set(1, 3) // " a" -> "c"
	set(3, 4) // "c" -> "\"d": the quote opens the token
	set(4, 5)
	set(2, 5) // " b\"" -> " e"
	set(5, 0) // " e" -> eos
	o := Options{Sampling: Sampling{TopP: 1}, MaxNewTokens: 10, EOS: 0, Stop: []string{"\""}, Decode: decoder(words)}
	outs, err := Generate(ctx, m, [][]int{{1}, {2}, {5}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := outs[0]; got.Stop != StopString || got.Text != "c" || got.StopString != "\"" || !slices.Equal(got.Tokens, []int{3, 4}) {
		t.Errorf("quote inside a token: %+v", got)
	}
	if got := outs[1]; got.Stop != StopEOS || got.Text != " e" || !slices.Equal(got.Tokens, []int{5}) {
		t.Errorf("prompt text is not searched for stops: %+v", got)
	}
	if got := outs[2]; got.Stop != StopEOS || len(got.Tokens) != 0 || got.Text != "" {
		t.Errorf("eos first: %+v", got)
	}
	m.maxLen = 4
	set(5, 5)
	outs, err = Generate(ctx, m, [][]int{{5, 5}}, Options{Sampling: Sampling{TopP: 1}, MaxNewTokens: 10, EOS: 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := outs[0]; got.Stop != StopContext || len(got.Tokens) != 2 {
		t.Errorf("context window of 4 after a prompt of 2: %+v", got)
	}
	if _, err := Generate(ctx, m, [][]int{{1}, {5, 5, 5, 5}}, Options{Sampling: Sampling{TopP: 1}, MaxNewTokens: 1, EOS: 0}); err == nil ||
		!strings.Contains(err.Error(), "prompt 1 has 4 tokens: the model's context window of 4 leaves no room") {
		t.Errorf("prompt too long: %v", err)
	}
}

// TestProcessorGroups: a processor of our own that sees the group
// {label prompt, counter-label prompt} and rescales the first member's
// distribution by how much more likely each token is under the second
// (self-debiasing's shape); with greedy decoding the result is checked by
// hand. It also records what it saw.
func TestProcessorGroups(t *testing.T) {
	m := newBigram(8, 5)
	m.table[1] = []float32{0, 3, 2.9, 0, 0, 0, 0, 0} // label prompt prefers 1, then 2
	m.table[2] = []float32{0, 0, 0, 0, 0, 0, 0, 3}
	m.table[6] = []float32{0, 5, 0, 0, 0, 0, 0, 0} // counter-label prompt strongly prefers 1
	m.table[7] = []float32{0, 0, 0, 0, 0, 0, 0, 3}
	var seen []string
	debias := ProcessorFunc(func(s *Step) error {
		seen = append(seen, fmt.Sprintf("step %d group %d sample %d prompts %v", s.Index, s.Group, s.Sample, s.Prompts))
		if len(s.Logits) != 2 {
			return nil
		}
		pl, pc := softmax64(s.Logits[0]), softmax64(s.Logits[1])
		for j := range s.Logits[0] {
			if d := pl[j] - pc[j]; d < 0 {
				s.Logits[0][j] = float32(math.Log(pl[j] * math.Exp(100*d)))
			}
		}
		return nil
	})
	o := Options{Sampling: Sampling{TopP: 1}, MaxNewTokens: 2, EOS: -1, Processors: []Processor{debias}, Groups: [][]int{{0, 2}}, Lockstep: true, Samples: 2}
	outs, err := Generate(ctx, m, [][]int{{1}, {3}, {6}}, o)
	if err != nil {
		t.Fatal(err)
	}
	// Without the processor prompt 0 would start with 1; debiased, 1 is
	// suppressed (the counter-label prompt likes it more) and 2 wins; the
	// counter-label sequence follows in lockstep.
	for s := 0; s < 2; s++ {
		if got := outs[0*2+s].Tokens; !slices.Equal(got, []int{2, 7}) {
			t.Errorf("debiased label sequence, sample %d: %v, want [2 7]", s, got)
		}
		if got := outs[2*2+s].Tokens; !slices.Equal(got, []int{2, 7}) {
			t.Errorf("counter-label sequence in lockstep, sample %d: %v, want [2 7]", s, got)
		}
	}
	want := []string{
		"step 0 group 0 sample 0 prompts [0 2]", "step 0 group 0 sample 1 prompts [0 2]", "step 0 group 1 sample 0 prompts [1]", "step 0 group 1 sample 1 prompts [1]",
		"step 1 group 0 sample 0 prompts [0 2]", "step 1 group 0 sample 1 prompts [0 2]", "step 1 group 1 sample 0 prompts [1]", "step 1 group 1 sample 1 prompts [1]",
	}
	if !slices.Equal(seen, want) {
		t.Errorf("processor calls:\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	// A processor's error names the step and the group.
	fail := ProcessorFunc(func(s *Step) error { return fmt.Errorf("boom") })
	if _, err := Generate(ctx, m, [][]int{{1}}, Options{Sampling: Sampling{TopP: 1}, MaxNewTokens: 2, EOS: -1, Processors: []Processor{fail}}); err == nil || err.Error() != "step 0, group 0, sample 0: boom" {
		t.Errorf("processor error: %v", err)
	}
}

func TestBadOptions(t *testing.T) {
	m := newBigram(5, 6)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{MaxNewTokens: 1, Sampling: Sampling{Temperature: 1, TopP: 0}}, "top_p 0 must lie in (0, 1]"},
		{Options{MaxNewTokens: 1, Sampling: Sampling{Temperature: 1, TopP: 1.5}}, "top_p 1.5 must lie in (0, 1]"},
		{Options{MaxNewTokens: 1, Sampling: Sampling{Temperature: 1, TopP: 1, TopK: -2}}, "top_k -2 must be at least 1"},
		{Options{MaxNewTokens: 1, Sampling: Sampling{Temperature: -1, TopP: 1}}, "temperature -1 must be"},
		{Options{MaxNewTokens: 1, Sampling: Sampling{TopP: 1, PresencePenalty: 3}}, "presence_penalty 3 must lie in [-2, 2]"},
		{Options{MaxNewTokens: 0, Sampling: Sampling{TopP: 1}}, "max_new_tokens 0 must be at least 1"},
		{Options{MaxNewTokens: 1, Sampling: Sampling{TopP: 1}, Stop: []string{""}, Decode: decoder(nil)}, "empty stop string"},
		{Options{MaxNewTokens: 1, Sampling: Sampling{TopP: 1}, Stop: []string{"x"}}, "stop strings need a Decode"},
		{Options{MaxNewTokens: 1, Sampling: Sampling{TopP: 1}, Groups: [][]int{{0}, {0}}}, "prompt 0 is in two groups"},
	} {
		if _, err := Generate(ctx, m, [][]int{{1}}, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.o, err, tc.want)
		}
	}
}

// TestScoreIncremental: the Session path of Score against log-softmax of
// the bigram table.
func TestScoreIncremental(t *testing.T) {
	m := newBigram(9, 7)
	prompts := [][]int{{1, 2}, {3}, {4}}
	conts := [][]int{{5, 6, 7}, {}, {8}}
	lp, err := Score(ctx, m, prompts, conts, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range prompts {
		last := prompts[i][len(prompts[i])-1]
		if len(lp[i]) != len(conts[i]) {
			t.Fatalf("pair %d: %d log-probs for %d tokens", i, len(lp[i]), len(conts[i]))
		}
		for j, tok := range conts[i] {
			want := math.Log(softmax64(m.table[last])[tok])
			if math.Abs(lp[i][j]-want) > 1e-9 {
				t.Errorf("pair %d token %d: %v, want %v", i, j, lp[i][j], want)
			}
			last = tok
		}
	}
	if Sum(lp[0]) >= 0 {
		t.Error("a log-likelihood is not negative")
	}
}

func TestStreams(t *testing.T) {
	seen := map[uint64]bool{}
	for p := 0; p < 100; p++ {
		for s := 0; s < 10; s++ {
			v := Stream(1, p, s).Uint64()
			if seen[v] {
				t.Fatalf("streams (1, %d, %d) collide", p, s)
			}
			seen[v] = true
		}
	}
	if Stream(1, 2, 3).Uint64() != Stream(1, 2, 3).Uint64() {
		t.Fatal("a stream is not reproducible")
	}
	_ = rand.New
}
