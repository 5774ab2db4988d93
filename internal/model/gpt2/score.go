package gpt2

import (
	"fmt"

	"repro/internal/generate"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

var _ generate.Scorer = (*Model)(nil)

// ScoreTokens returns the natural-log probability of every token of
// conts[i] given prompts[i] and the tokens before it, from one causal pass
// over each prompt+continuation (generate.Scorer). Prompts must not be
// empty; prompt+continuation must fit the context window.
func (m *Model) ScoreTokens(prompts, conts [][]int) ([][]float64, error) {
	if len(prompts) != len(conts) {
		return nil, fmt.Errorf("gpt2: %d prompts and %d continuations", len(prompts), len(conts))
	}
	if len(prompts) == 0 {
		return nil, nil
	}
	seqs := make([][]int, len(prompts))
	for i := range prompts {
		if len(prompts[i]) == 0 {
			return nil, fmt.Errorf("gpt2: prompt %d is empty", i)
		}
		seqs[i] = append(append(make([]int, 0, len(prompts[i])+len(conts[i])), prompts[i]...), conts[i]...)
		if len(seqs[i]) > m.Config.NPositions {
			return nil, fmt.Errorf("gpt2: prompt and continuation %d have %d tokens, more than the context window of %d", i, len(seqs[i]), m.Config.NPositions)
		}
	}
	b, err := transformer.NewBatch(seqs, m.Config.EOSTokenID)
	if err != nil {
		return nil, fmt.Errorf("gpt2: %w", err)
	}
	logits, err := m.Forward(b, nil)
	if err != nil {
		return nil, err
	}
	L := tensor.Data(logits)
	V := m.Config.VocabSize
	out := make([][]float64, len(seqs))
	for i := range seqs {
		p := len(prompts[i])
		out[i] = make([]float64, len(conts[i]))
		for j, tok := range conts[i] {
			row := (i*b.T + p + j - 1) * V
			out[i][j] = generate.LogProb(L[row:row+V], tok)
		}
	}
	return out, nil
}
