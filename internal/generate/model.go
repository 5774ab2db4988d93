package generate

import "math"

// Model is what the engine needs from a language model: the logits of the
// next position of every sequence of a batch, given what each has read so
// far. A decoder-only model (GPT-2) reads the prompt and continues it; an
// encoder-decoder model (T5) encodes the prompt once in Start -- computing
// its cross-attention keys and values there, once per input -- and
// continues the decoder from its start token.
type Model interface {
	// VocabSize is the number of logits per position.
	VocabSize() int
	// MaxLength is the most tokens one sequence can hold (prompt and
	// generated tokens; for an encoder-decoder model the decoder's); 0
	// means no limit.
	MaxLength() int
	// Start begins one sequence per prompt, reading each prompt whole
	// (prompts may differ in length), with room for capacity tokens per
	// sequence (prompt included; Start fails when a prompt is longer or
	// capacity exceeds MaxLength). The session's Logits are then the
	// distributions of each sequence's first new token.
	Start(prompts [][]int, capacity int) (Session, error)
}

// Session is a batch of sequences being decoded: the model's caches (a
// key/value cache per self-attention layer; cross-attention keys and
// values, for encoder-decoder models, computed once in Start) and the
// logits of the next position.
type Session interface {
	// Len is the number of sequences.
	Len() int
	// Logits returns the next-token logits, Len() rows of VocabSize()
	// values, row-major. The caller may modify them; they stay valid until
	// the next Append or Select.
	Logits() []float32
	// Append feeds one token to every sequence (tokens[i] to sequence i)
	// and computes the next logits.
	Append(tokens []int) error
	// Select keeps the sequences rows, in that order: sequence i becomes
	// the old sequence rows[i], cache and logits included. An index may
	// repeat (n samples from one prompt read it once, then fork).
	Select(rows []int) error
}

// Scorer is an optional fast path for scoring: a model that can compute
// the log-probabilities of whole continuations in one pass (a decoder-only
// model runs prompt and continuation through one causal forward) instead
// of one Append per token. Score uses it when a model has it; both paths
// give the same numbers up to float32 rounding.
type Scorer interface {
	// ScoreTokens returns, for each i, the natural-log probability of
	// every token of conts[i] given prompts[i] and the tokens before it.
	ScoreTokens(prompts, conts [][]int) ([][]float64, error)
}

// LogProb is log softmax(logits)[tok], accumulated in float64.
func LogProb(logits []float32, tok int) float64 {
	mx := logits[0]
	for _, v := range logits[1:] {
		mx = max(mx, v)
	}
	m := float64(mx)
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - m)
	}
	return float64(logits[tok]) - m - math.Log(sum)
}
