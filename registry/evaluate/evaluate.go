// Package evaluate holds the evaluate.* stage types: each takes an encoder
// artifact and a data artifact, encodes the data's sentences and writes the
// paper's metrics (package internal/metrics) to metrics.json.
//
// Shared design:
//
//   - Sentences are deduplicated (first-seen order) before encoding, and
//     encoded in batches of batch_size; a vector for a sentence is reused
//     wherever the sentence occurs. The encoder sees each text once.
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
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/embed"
	"repro/registry"
)

// Register adds the evaluate.* stage types to r.
func Register(r *registry.Registry) {
	r.Add(stsType())
	r.Add(rerankType())
	r.Add(retrievalType())
	r.Add(densityType())
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

// encode encodes the set in batches and validates every vector.
func (s *sentenceSet) encode(ctx context.Context, env *registry.Env, enc embed.Encoder, batch int) ([][]float32, error) {
	if batch < 1 {
		return nil, fmt.Errorf("batch_size = %d: must be at least 1", batch)
	}
	dim := enc.Dim()
	out := make([][]float32, 0, len(s.texts))
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
			zero := true
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return nil, fmt.Errorf("encoder returned a non-finite value (%v) for %q (%s)", x, clip(s.texts[i]), s.origin[i])
				}
				zero = zero && x == 0
			}
			if zero {
				zeros++
			}
			out = append(out, v)
		}
		progress(env, end, len(s.texts), "encoding")
	}
	if zeros > 0 {
		logger(env).Warn("encoder returned zero vectors; their cosine with anything is 0", "count", zeros, "sentences", len(s.texts))
	}
	return out, nil
}

// openInputs opens the encoder and returns the named data artifact.
func openInputs(env *registry.Env, data string) (embed.Encoder, registry.Artifact, error) {
	ea, err := env.Input("encoder")
	if err != nil {
		return nil, registry.Artifact{}, err
	}
	da, err := env.Input(data)
	if err != nil {
		return nil, registry.Artifact{}, err
	}
	enc, err := embed.Open(ea.Dir)
	if err != nil {
		return nil, registry.Artifact{}, err
	}
	if enc.Dim() < 1 {
		return nil, registry.Artifact{}, fmt.Errorf("encoder in %s has dimension %d", ea.Dir, enc.Dim())
	}
	return enc, da, nil
}

// writeMetrics writes m as metrics.json into the metrics output. JSON
// cannot hold NaN, so a NaN that slipped through is reported, not written.
func writeMetrics(env *registry.Env, m map[string]any) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("writing %s: %v", registry.FileMetrics, err)
	}
	return os.WriteFile(filepath.Join(env.Output("metrics"), registry.FileMetrics), append(b, '\n'), 0o644)
}

func progress(env *registry.Env, done, total int, status string) {
	if env.Progress != nil {
		env.Progress.Update(done, total, status)
	}
}

func logger(env *registry.Env) *slog.Logger {
	if env.Log != nil {
		return env.Log
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
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
