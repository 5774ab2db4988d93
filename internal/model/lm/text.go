package lm

import (
	"context"
	"fmt"
	"math"

	"repro/internal/generate"
)

// Frame turns one text's token ids into causal-LM sequences: EOS + ids +
// EOS (GPT-2's document separator on both sides, so the model learns where
// a text starts and ends), split into windows of at most maxLen tokens
// that overlap by one token, so that every token but the first is predicted
// exactly once whatever the window size.
func Frame(ids []int, eos, maxLen int) [][]int {
	return Pack([][]int{ids}, eos, maxLen)
}

// Framings of one text for scoring (evaluate.perplexity's framing): where
// end-of-text tokens stand around the text's ids. The first token of a
// sequence is context, never scored.
const (
	// FrameEOSBoth is EOS + ids + EOS (Frame; train.causal_lm's framing):
	// every token of the text and the final EOS are scored.
	FrameEOSBoth = "eos_s_eos"
	// FrameEOSFirst is EOS + ids: every token of the text is scored, no
	// end token (lm-evaluation-harness's rolling log-likelihood).
	FrameEOSFirst = "eos_s"
	// FrameBare is the ids alone: the text's first token is context, the
	// rest scored (a text scored as transformers' models score labels
	// equal to their inputs, no special token added).
	FrameBare = "s"
)

// Framings lists the framings FrameWith knows.
func Framings() []string { return []string{FrameEOSBoth, FrameEOSFirst, FrameBare} }

// FrameWith frames one text's ids as framing says and cuts the result into
// windows of at most maxLen tokens as Frame does. A text that leaves
// nothing to score (FrameBare and one token) gives no sequence.
func FrameWith(framing string, ids []int, eos, maxLen int) ([][]int, error) {
	switch framing {
	case FrameEOSBoth:
		return Frame(ids, eos, maxLen), nil
	case FrameEOSFirst:
		return windows(append([]int{eos}, ids...), maxLen), nil
	case FrameBare:
		return windows(ids, maxLen), nil
	}
	return nil, fmt.Errorf("framing %q is not one of %v", framing, Framings())
}

// Pack concatenates texts' token ids into one stream, EOS before, between
// and after them (EOS t1 EOS t2 EOS ...), and cuts it into windows of
// maxLen tokens overlapping by one token: the grouping of transformers'
// run_clm.py (group_texts), so a training batch holds no padding. Every
// token but the stream's first is predicted exactly once; a text may span
// two windows, and attention crosses text boundaries as in GPT-2's own
// training.
func Pack(texts [][]int, eos, maxLen int) [][]int {
	n := 1
	for _, t := range texts {
		n += len(t) + 1
	}
	stream := make([]int, 0, n)
	stream = append(stream, eos)
	for _, t := range texts {
		stream = append(stream, t...)
		stream = append(stream, eos)
	}
	return windows(stream, maxLen)
}

// windows cuts seq into pieces of at most maxLen (>= 2) tokens, each
// starting with the previous one's last token.
func windows(seq []int, maxLen int) [][]int {
	if maxLen < 2 {
		maxLen = 2
	}
	var out [][]int
	for start := 0; start < len(seq)-1; start += maxLen - 1 {
		out = append(out, seq[start:min(start+maxLen, len(seq))])
	}
	return out
}

// Perplexity is a corpus's perplexity under a model: exp of the mean
// negative log-likelihood of every predicted token (each sequence's tokens
// after its first), scored in batches through generate.Score.
type Perplexity struct {
	Perplexity float64 `json:"perplexity"`
	NLL        float64 `json:"nll"`    // mean negative log-likelihood per token (nats)
	Tokens     int     `json:"tokens"` // predicted tokens
	Sequences  int     `json:"sequences"`
}

// Evaluate scores seqs (each at least two tokens) with m.
func Evaluate(ctx context.Context, m generate.Model, seqs [][]int, batch int) (Perplexity, error) {
	if len(seqs) == 0 {
		return Perplexity{}, fmt.Errorf("perplexity of an empty corpus")
	}
	prompts, conts := make([][]int, len(seqs)), make([][]int, len(seqs))
	for i, s := range seqs {
		if len(s) < 2 {
			return Perplexity{}, fmt.Errorf("sequence %d has %d tokens: nothing to predict", i, len(s))
		}
		prompts[i], conts[i] = s[:1], s[1:]
	}
	lps, err := generate.Score(ctx, m, prompts, conts, batch)
	if err != nil {
		return Perplexity{}, err
	}
	var nll float64
	n := 0
	for _, lp := range lps { // fixed order
		nll -= generate.Sum(lp)
		n += len(lp)
	}
	nll /= float64(n)
	return Perplexity{Perplexity: math.Exp(nll), NLL: nll, Tokens: n, Sequences: len(seqs)}, nil
}

// OptionScores are the raw scores of options as continuations of prompts
// (ScoreOptionTokens): what ScoreOptions sums, kept per token for the
// stages that write them out.
type OptionScores struct {
	// IDs[j] are option j's token ids: the option encoded without special
	// tokens, so no end token (T5's </s>, GPT-2's <|endoftext|>) follows
	// the label and none is scored.
	IDs [][]int
	// Tokens[i][j][t] is the natural-log probability of IDs[j][t] after
	// prompt i and the option's tokens before t.
	Tokens [][][]float64
}

// Sum is option j's total log-probability after prompt i: generate.Sum of
// its per-token values, the number ScoreOptions returns.
func (s *OptionScores) Sum(i, j int) float64 { return generate.Sum(s.Tokens[i][j]) }

// EndTokenScored says whether an option's log-probability includes an end
// token after the label: never, here (options are encoded without special
// tokens; GenSE's T_d compares the label sequences alone).
const EndTokenScored = false

// ScoreOptionTokens scores every option as the model's continuation of
// every prompt, token by token, in batches through generate.Score. Prompts
// are framed by Prompt (bos as there); options are encoded without special
// tokens (no end token is appended or scored), so a causal model's option
// should carry its leading space (" true").
func (l *LM) ScoreOptionTokens(ctx context.Context, prompts, options []string, bos bool, batch int) (*OptionScores, error) {
	if len(options) == 0 {
		return nil, fmt.Errorf("score: no options")
	}
	opts := make([][]int, len(options))
	for i, o := range options {
		if opts[i] = l.Encode(o); len(opts[i]) == 0 {
			return nil, fmt.Errorf("score: option %q has no tokens", o)
		}
	}
	var ps, cs [][]int
	for i, p := range prompts {
		ids := l.Prompt(p, bos)
		if len(ids) == 0 {
			return nil, fmt.Errorf("score: prompt %d is empty", i)
		}
		for _, o := range opts {
			ps, cs = append(ps, ids), append(cs, o)
		}
	}
	lps, err := generate.Score(ctx, l.Model, ps, cs, batch)
	if err != nil {
		return nil, err
	}
	out := &OptionScores{IDs: opts, Tokens: make([][][]float64, len(prompts))}
	for i := range prompts {
		out.Tokens[i] = lps[i*len(options) : (i+1)*len(options)]
	}
	return out, nil
}

// ScoreOptions returns, for every prompt, the total natural-log
// probability of each option as the model's continuation of it (GenSE's
// discriminator compares "true" with "false"): ScoreOptionTokens summed
// per option. No end token after the option is scored (EndTokenScored).
func (l *LM) ScoreOptions(ctx context.Context, prompts, options []string, bos bool, batch int) ([][]float64, error) {
	sc, err := l.ScoreOptionTokens(ctx, prompts, options, bos, batch)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(prompts))
	for i := range prompts {
		out[i] = make([]float64, len(options))
		for j := range options {
			out[i][j] = sc.Sum(i, j)
		}
	}
	return out, nil
}
