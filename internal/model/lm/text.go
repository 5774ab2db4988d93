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
	seq := make([]int, 0, len(ids)+2)
	seq = append(seq, eos)
	seq = append(seq, ids...)
	seq = append(seq, eos)
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
