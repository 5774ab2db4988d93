// Package evaluate holds the evaluate.* stage types: each takes an encoder
// artifact and a data artifact, encodes the data's sentences and writes the
// paper's metrics (package internal/metrics) to metrics.json;
// evaluate.perplexity (perplexity.go) takes a language model instead.
//
// Shared design:
//
//   - Sentences are deduplicated (first-seen order) before encoding, and
//     encoded in batches of batch_size; a vector for a sentence is reused
//     wherever the sentence occurs. The encoder sees each text once.
//   - Encoded vectors that are mostly zeros (TF-IDF: a few dozen non-zeros
//     in 8192 dimensions) are stored as index/value lists and expanded only
//     where a metric needs them (vectors.at), so the 30k distinct sentences
//     of the STS sets, or the 40k of BBC News, take megabytes rather than
//     1 GB. The values are the encoder's own float32s: metrics are the same
//     bits either way (TestCompactSameMetrics).
//   - A vector of the wrong dimension or with a NaN/Inf component is an
//     error naming the sentence and the row it first appeared on: a metric
//     computed over it would be silently wrong. A zero vector is legitimate
//     (a bag-of-words encoder and a sentence of unknown words) and has
//     cosine 0 with everything, as in SentEval and MTEB; the stage logs how
//     many it saw.
//   - A metric that is undefined on the data (constant similarities, no
//     query left) is an error naming the task, never a NaN in metrics.json.
//   - Correlations, AP, MRR and recall are written x100, as the papers print
//     them; alignment, uniformity and cosine statistics are raw.
//
// The stage types are registered with Tensor set, since encoding with a
// neural encoder is tensor work; none is seeded (evaluation is
// deterministic).
package evaluate

import (
	"context"
	"fmt"
	"math"
	"strings"

	"repro/internal/encoder"
	"repro/registry"
)

// Register adds the evaluate.* stage types to r.
func Register(r *registry.Registry) {
	r.Add(stsType())
	r.Add(rerankType())
	r.Add(retrievalType())
	r.Add(densityType())
	r.Add(perplexityType())
	r.Add(spanCorruptionType())
}

// encoderPort is the encoder input every evaluate type has.
var encoderPort = registry.Port{Name: "encoder", Kind: registry.KindEncoder, Doc: "the sentence encoder to evaluate"}

// metricsPort is the metrics output every evaluate type has.
var metricsPort = registry.Port{Name: "metrics", Kind: registry.KindMetrics, Doc: "metrics.json"}

const defaultBatch = 64

// sentenceSet collects distinct sentences in first-seen order, remembering
// where each first appeared so that errors can point at a row.
type sentenceSet struct {
	index  map[string]int
	texts  []string
	origin []string
}

func newSentenceSet() *sentenceSet { return &sentenceSet{index: map[string]int{}} }

// add returns the index of text, adding it if new; origin says where it
// came from ("pairs.jsonl row 3, sentence1").
func (s *sentenceSet) add(text, origin string) int {
	if i, ok := s.index[text]; ok {
		return i
	}
	s.index[text] = len(s.texts)
	s.texts = append(s.texts, text)
	s.origin = append(s.origin, origin)
	return len(s.texts) - 1
}

// vectors holds the encoded distinct sentences. A vector that is mostly
// zeros (a bag of words: TF-IDF has a few dozen non-zeros among 8192
// dimensions) is kept as its non-zero indices and values, so the 30k
// sentences of the STS sets take megabytes instead of 1 GB; at expands it
// again. The values are the encoder's float32s, so every metric sees
// exactly the numbers the encoder returned.
type vectors struct {
	dim   int
	dense [][]float32 // nil where the vector is kept compact
	idx   [][]int32
	val   [][]float32
}

// compactVectors, when false, keeps every vector dense (tests compare).
var compactVectors = true

func (v *vectors) len() int { return len(v.dense) }

// add appends vec, which has nz components whose bits are not +0, keeping
// it compact when that takes less memory (8 bytes per non-zero against 4
// per dimension). Only +0 bits are dropped, so at gives back the same bits
// (a -0 is kept).
func (v *vectors) add(vec []float32, nz int) {
	if !compactVectors || 2*nz > len(vec) {
		v.dense = append(v.dense, vec)
		v.idx, v.val = append(v.idx, nil), append(v.val, nil)
		return
	}
	idx, val := make([]int32, 0, nz), make([]float32, 0, nz)
	for k, x := range vec {
		if math.Float32bits(x) != 0 {
			idx, val = append(idx, int32(k)), append(val, x)
		}
	}
	v.dense = append(v.dense, nil)
	v.idx, v.val = append(v.idx, idx), append(v.val, val)
}

// at returns vector i. A compact vector is expanded into buf (which must
// have dim elements, or be nil for a new slice); a dense one is returned
// as stored. The caller must not modify the result.
func (v *vectors) at(i int, buf []float32) []float32 {
	if d := v.dense[i]; d != nil {
		return d
	}
	if buf == nil {
		buf = make([]float32, v.dim)
	} else {
		clear(buf)
	}
	for p, k := range v.idx[i] {
		buf[k] = v.val[i][p]
	}
	return buf
}

// encode encodes the set in batches and validates every vector.
func (s *sentenceSet) encode(ctx context.Context, env *registry.Env, enc encoder.Encoder, batch int) (*vectors, error) {
	if batch < 1 {
		return nil, fmt.Errorf("batch_size = %d: must be at least 1", batch)
	}
	dim := enc.Dim()
	out := &vectors{dim: dim}
	zeros := 0
	for start := 0; start < len(s.texts); start += batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+batch, len(s.texts))
		vs, err := enc.Encode(ctx, s.texts[start:end])
		if err != nil {
			return nil, fmt.Errorf("encoding sentences %d-%d of %d: %w", start+1, end, len(s.texts), err)
		}
		if len(vs) != end-start {
			return nil, fmt.Errorf("encoder returned %d vectors for %d sentences", len(vs), end-start)
		}
		for k, v := range vs {
			i := start + k
			if len(v) != dim {
				return nil, fmt.Errorf("encoder returned a %d-dimensional vector (Dim() = %d) for %q (%s)", len(v), dim, clip(s.texts[i]), s.origin[i])
			}
			zero, nz := true, 0
			for _, x := range v {
				if math.Float32bits(x) == 0 {
					continue // +0: the common case in a bag of words
				}
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return nil, fmt.Errorf("encoder returned a non-finite value (%v) for %q (%s)", x, clip(s.texts[i]), s.origin[i])
				}
				zero = zero && x == 0
				nz++
			}
			if zero {
				zeros++
			}
			out.add(v, nz)
		}
		env.Report(end, len(s.texts), "encoding")
	}
	if zeros > 0 {
		env.Logger().Warn("encoder returned zero vectors; their cosine with anything is 0", "count", zeros, "sentences", len(s.texts))
	}
	return out, nil
}

// openInputs opens the encoder and returns the named data artifact.
func openInputs(env *registry.Env, data string) (encoder.Encoder, registry.Artifact, error) {
	ea, err := env.Input("encoder")
	if err != nil {
		return nil, registry.Artifact{}, err
	}
	da, err := env.Input(data)
	if err != nil {
		return nil, registry.Artifact{}, err
	}
	enc, err := encoder.Open(ea.Dir)
	if err != nil {
		return nil, registry.Artifact{}, err
	}
	if enc.Dim() < 1 {
		return nil, registry.Artifact{}, fmt.Errorf("encoder in %s has dimension %d", ea.Dir, enc.Dim())
	}
	return enc, da, nil
}

// clip shortens a sentence for an error message.
func clip(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return s
}

// normalizeSpace re-joins whitespace-split text, as SentEval does before
// encoding STS sentences.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
