// Package dino generates labelled sentence-pair datasets from instructions
// (DINO: Schick and Schütze 2021, "Generating Datasets with Pretrained
// Language Models") and post-processes them for bi-encoder training.
//
// Design choices:
//
//   - Generation goes through repro's one engine (internal/generate): the
//     instruction of label y and those of its counterlabels CL(y) = {y' > y}
//     form one lockstep group, debiased by generate.SelfDebias, so a whole
//     batch of (x1, y) pairs decodes together with the KV cache.
//   - The closing quotation mark ends x2; it is found in the DECODED text
//     (generate's stop strings), so a quote that BPE merged into a longer
//     token still ends it. Outputs without one (40 tokens, or the end of
//     text first) are dropped and counted, and the (x1, y) gets another
//     try, up to MaxTries, until it has X2PerX1 continuations.
//   - Every draw has its own random stream (seed, try, prompt, sample), so
//     a dataset is reproducible bit for bit on the CPU.
//   - Lambda 0 generates without the counterlabel prompts at all (plain
//     top-k/top-p sampling): the same distribution self-debiasing with
//     lambda 0 gives, at a third of the cost.
//   - The post-processing steps (post.go) are separate functions so that
//     each is its own cached stage with its own artifact.
package dino

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"repro/internal/generate"
	"repro/internal/prompt"
	"repro/internal/rows"
)

// Placeholders of an instruction template.
const (
	PlaceholderX1          = prompt.X // the input sentence x1, as every template in repro
	PlaceholderInstruction = "[I]"    // the label's instruction text i_y
)

// Template is Figure 2's instruction template I_y(x1), lines as in the
// released task specifications.
const Template = "Task: Write two sentences that [I].\nSentence 1: \"[X]\"\nSentence 2: \""

// Label is a similarity label with its instruction text i_y.
type Label struct {
	Value       float64
	Instruction string
}

// Labels are the paper's three levels (Section 3).
var Labels = []Label{
	{1, "mean the same thing"},
	{0.5, "are somewhat similar"},
	{0, "are on completely different topics"},
}

// LM is what generation needs of a language model.
type LM struct {
	Model generate.Model
	// Prompt encodes a prompt (with the BOS token where the model wants it).
	Prompt func(text string) []int
	// Encode encodes text without special tokens; Decode is its inverse.
	Encode func(text string) []int
	Decode func(ids []int) string
	// EOS ends a sequence (< 0: none).
	EOS int
}

// CheckQuote reports an error when the tokenizer cannot produce quote:
// generation would never see x2 end.
func (lm LM) CheckQuote(quote string) error {
	ids := lm.Encode(quote)
	if len(ids) == 0 || lm.Decode(ids) != quote {
		return fmt.Errorf("the generator's tokenizer cannot write the quotation mark %q (it encodes to %v, which decodes to %q): the closing quote that ends every generated sentence could never be produced", quote, ids, lm.Decode(ids))
	}
	return nil
}

// CheckTemplate reports a template without the x1 placeholder (or the
// instruction placeholder), or one that does not end x1's quote.
func CheckTemplate(t string) error {
	switch {
	case !strings.Contains(t, PlaceholderX1):
		return fmt.Errorf("%q has no %s placeholder for the input sentence x1", t, PlaceholderX1)
	case strings.Count(t, PlaceholderX1) > 1:
		return fmt.Errorf("%q has %s more than once", t, PlaceholderX1)
	case !strings.Contains(t, PlaceholderInstruction):
		return fmt.Errorf("%q has no %s placeholder for the label's instruction", t, PlaceholderInstruction)
	}
	return nil
}

// Instruction is I_y(x1): the template with i_y and x1 filled in.
func Instruction(template, instruction, x1 string) string {
	return strings.ReplaceAll(strings.ReplaceAll(template, PlaceholderInstruction, instruction), PlaceholderX1, x1)
}

// X1Prompt is the template with i_y filled in, cut right after x1's
// opening quotation mark: the prompt that generates x1 (STS-L-x1x2).
func X1Prompt(template, instruction string) string {
	t := strings.ReplaceAll(template, PlaceholderInstruction, instruction)
	return t[:strings.Index(t, PlaceholderX1)]
}

// Config configures GeneratePairs.
type Config struct {
	Template string
	Labels   []Label
	// X2PerX1 continuations per (x1, y) are kept, from at most MaxTries
	// rounds of X2PerX1 draws each.
	X2PerX1, MaxTries int
	Sampling          generate.Sampling
	MaxNewTokens      int
	// Quote ends x2 (and x1 in GenerateX1).
	Quote string
	// Lambda and Epsilon configure self-debiasing (see generate.SelfDebias).
	Lambda, Epsilon float64
	Seed            uint64
	BatchSize       int
	Progress        func(done, total int)
	// TokenIDs puts each generated row's x2 ids and prompt ids in it
	// (rows.GeneratedPair.X2IDs, PromptIDs).
	TokenIDs bool
}

// LabelStats counts one label's draws.
type LabelStats struct {
	Label float64 `json:"label"`
	// Drawn: every output generated; Kept: pairs written; NoQuote: dropped
	// without a closing quote (max_new_tokens, end of text, context
	// window); Empty: dropped because x2 was empty; Surplus: complete
	// outputs beyond X2PerX1 for their (x1, y); Short: (x1, y) left with
	// fewer than X2PerX1 after MaxTries.
	Drawn   int `json:"drawn"`
	Kept    int `json:"kept"`
	NoQuote int `json:"no_quote"`
	Empty   int `json:"empty"`
	Surplus int `json:"surplus"`
	Short   int `json:"short"`
}

// counterlabels returns the indices of labels whose value exceeds label i's.
func counterlabels(labels []Label, i int) []int {
	var out []int
	for j, l := range labels {
		if l.Value > labels[i].Value {
			out = append(out, j)
		}
	}
	return out
}

// GeneratePairs continues I_y(x1) for every x1 and label (Section 3 and
// footnote 2 of the paper) and returns the pairs, ordered by x1, label
// (config order), try and sample, with per-label counts.
func GeneratePairs(ctx context.Context, lm LM, x1s []string, c Config) ([]rows.GeneratedPair, []LabelStats, error) {
	if len(x1s) == 0 {
		return nil, nil, fmt.Errorf("no input sentences x1")
	}
	if err := CheckTemplate(c.Template); err != nil {
		return nil, nil, err
	}
	debias := &generate.SelfDebias{Lambda: c.Lambda, Epsilon: c.Epsilon}
	if err := debias.Validate(); err != nil {
		return nil, nil, err
	}
	if err := lm.CheckQuote(c.Quote); err != nil {
		return nil, nil, err
	}
	nl := len(c.Labels)
	// prompts[x*nl+l] is I_l(x1s[x]), tokenized once.
	prompts := make([][]int, len(x1s)*nl)
	for x, s := range x1s {
		if strings.TrimSpace(s) == "" {
			return nil, nil, fmt.Errorf("input sentence %d is empty", x+1)
		}
		for l, lab := range c.Labels {
			prompts[x*nl+l] = lm.Prompt(Instruction(c.Template, lab.Instruction, s))
		}
	}
	stats := make([]LabelStats, nl)
	for l := range stats {
		stats[l].Label = c.Labels[l].Value
	}
	kept := make([][]rows.GeneratedPair, len(prompts))
	total := len(prompts)
	for try := 0; try < c.MaxTries; try++ {
		var open []int // (x, l) cells still short
		for cell := range prompts {
			if len(kept[cell]) < c.X2PerX1 {
				open = append(open, cell)
			}
		}
		if len(open) == 0 {
			break
		}
		// The batch's prompts: each open cell's label prompt, then its
		// counterlabel prompts (with lambda > 0), one lockstep group.
		var batch [][]int
		var groups [][]int
		leader := make([]int, len(open))
		for i, cell := range open {
			x, l := cell/nl, cell%nl
			leader[i] = len(batch)
			g := []int{len(batch)}
			batch = append(batch, prompts[cell])
			if c.Lambda > 0 {
				for _, cl := range counterlabels(c.Labels, l) {
					g = append(g, len(batch))
					batch = append(batch, prompts[x*nl+cl])
				}
			}
			groups = append(groups, g)
		}
		o := generate.Options{Sampling: c.Sampling, MaxNewTokens: c.MaxNewTokens, Samples: c.X2PerX1, EOS: lm.EOS,
			Stop: []string{c.Quote}, Decode: lm.Decode, Seed: c.Seed ^ uint64(try)*0x9e3779b97f4a7c15,
			Groups: groups, Lockstep: true, BatchSize: c.BatchSize}
		if c.Lambda > 0 {
			o.Processors = []generate.Processor{debias}
		}
		if c.Progress != nil {
			done := total - len(open)
			o.Progress = func(d, n int) { c.Progress(done+d*len(open)/max(n, 1), total) }
		}
		outs, err := generate.Generate(ctx, lm.Model, batch, o)
		if err != nil {
			return nil, nil, err
		}
		for i, cell := range open {
			x, l := cell/nl, cell%nl
			for s := 0; s < c.X2PerX1; s++ {
				out := outs[leader[i]*c.X2PerX1+s]
				st := &stats[l]
				st.Drawn++
				x2 := strings.TrimSpace(out.Text)
				switch {
				case out.Stop != generate.StopString:
					st.NoQuote++
				case x2 == "":
					st.Empty++
				case len(kept[cell]) >= c.X2PerX1:
					st.Surplus++
				default:
					p := rows.GeneratedPair{Sentence1: x1s[x], Sentence2: x2,
						Label: c.Labels[l].Value, Instruction: c.Labels[l].Value, Origin: "generated",
						X1: x, Try: try, Sample: s}
					if c.TokenIDs {
						p.X2IDs, p.PromptIDs = out.Tokens, prompts[cell]
					}
					kept[cell] = append(kept[cell], p)
				}
			}
		}
	}
	var out []rows.GeneratedPair
	for cell, ps := range kept {
		stats[cell%nl].Kept += len(ps)
		if len(ps) < c.X2PerX1 {
			stats[cell%nl].Short++
		}
		out = append(out, ps...)
	}
	return out, stats, nil
}

// X1Config configures GenerateX1.
type X1Config struct {
	Template     string
	Labels       []Label
	Count        int // distinct sentences wanted
	MaxRounds    int
	Sampling     generate.Sampling
	MaxNewTokens int
	Quote        string
	Seed         uint64
	BatchSize    int
	Progress     func(done, total int)
}

// X1Stats counts GenerateX1's draws.
type X1Stats struct {
	Drawn     int `json:"drawn"`
	Kept      int `json:"kept"`
	NoQuote   int `json:"no_quote"`
	Empty     int `json:"empty"`
	Duplicate int `json:"duplicate"`
	Rounds    int `json:"rounds"`
}

// X1 is one generated input sentence with the ids it came from.
type X1 struct {
	Text string // the sentence, trimmed
	// IDs are the generated token ids: decoded, Text (before trimming),
	// then the closing quote and whatever else the token that completed
	// it held. Prompt are the prompt's ids as the model read them.
	IDs, Prompt []int
}

// GenerateX1 generates Count distinct sentences x1 from the template cut
// after x1's opening quote (the paper's STS-L-x1x2), the prompts cycling
// through the labels' instructions; rounds of the missing number of draws
// repeat until Count are found or MaxRounds have run.
func GenerateX1(ctx context.Context, lm LM, c X1Config) ([]string, X1Stats, error) {
	xs, st, err := GenerateX1Tokens(ctx, lm, c)
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.Text
	}
	return out, st, err
}

// GenerateX1Tokens is GenerateX1 with each sentence's token ids.
func GenerateX1Tokens(ctx context.Context, lm LM, c X1Config) ([]X1, X1Stats, error) {
	var st X1Stats
	if err := CheckTemplate(c.Template); err != nil {
		return nil, st, err
	}
	if err := lm.CheckQuote(c.Quote); err != nil {
		return nil, st, err
	}
	if c.Count < 1 || len(c.Labels) == 0 {
		return nil, st, fmt.Errorf("nothing to generate: count %d, %d labels", c.Count, len(c.Labels))
	}
	prompts := make([][]int, len(c.Labels))
	for l, lab := range c.Labels {
		prompts[l] = lm.Prompt(X1Prompt(c.Template, lab.Instruction))
	}
	seen := map[string]bool{}
	var out []X1
	drawn := 0 // prompt index across rounds: every draw has its own stream
	for round := 0; round < c.MaxRounds && len(out) < c.Count; round++ {
		st.Rounds++
		n := c.Count - len(out)
		batch := make([][]int, n)
		for i := range batch {
			batch[i] = prompts[(drawn+i)%len(prompts)]
		}
		o := generate.Options{Sampling: c.Sampling, MaxNewTokens: c.MaxNewTokens, Samples: 1, EOS: lm.EOS,
			Stop: []string{c.Quote}, Decode: lm.Decode, Seed: c.Seed ^ uint64(round)*0x9e3779b97f4a7c15, BatchSize: c.BatchSize}
		if c.Progress != nil {
			have := len(out)
			o.Progress = func(d, _ int) { c.Progress(min(have+d, c.Count), c.Count) }
		}
		outs, err := generate.Generate(ctx, lm.Model, batch, o)
		if err != nil {
			return nil, st, err
		}
		for _, o := range outs {
			st.Drawn++
			s := strings.TrimSpace(o.Text)
			switch {
			case o.Stop != generate.StopString:
				st.NoQuote++
			case s == "":
				st.Empty++
			case seen[s]:
				st.Duplicate++
			default:
				seen[s] = true
				out = append(out, X1{Text: s, IDs: o.Tokens, Prompt: batch[o.Prompt]})
			}
		}
		drawn += n
	}
	st.Kept = len(out)
	return out, st, nil
}

// CountLabels returns how many pairs carry each label, by label value.
func CountLabels(ps []rows.GeneratedPair) map[float64]int {
	n := map[float64]int{}
	for _, p := range ps {
		n[p.Label]++
	}
	return n
}

// SortedLabels returns the keys of a label count, descending.
func SortedLabels(n map[float64]int) []float64 {
	var ls []float64
	for l := range n {
		ls = append(ls, l)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ls)))
	return ls
}
