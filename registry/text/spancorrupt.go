package text

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"repro/internal/model/tokenizer"
	"repro/internal/rows"
	"repro/internal/text/spancorrupt"
	"repro/registry"
)

// SpanCorruptParams are text.span_corrupt's parameters. Defaults are T5's
// objective; pack_words stands in for T5's packing of its corpus into
// 512-token sequences (see the stage doc).
type SpanCorruptParams struct {
	NoiseDensity   float64 `cty:"noise_density" doc:"fraction of words corrupted (T5: 0.15)"`
	MeanSpanLength float64 `cty:"mean_noise_span_length" doc:"mean length of a corrupted span in words (T5: 3)"`
	PackWords      int     `cty:"pack_words" doc:"the sentences' words are concatenated in order and cut into sequences of this many words (the last may be shorter), as T5 packs its corpus; 0 corrupts each sentence alone (at 30 words or fewer T5's mask is then always the sentence's end)"`
	Copies         int     `cty:"copies" doc:"instances drawn per sequence, each with its own mask"`
}

// spanCorruptDoc is the stage type's documentation.
const spanCorruptDoc = `T5's span-corruption objective (Raffel et al. 2020) as text-to-text instances: in each
word sequence, noise_density of the words in spans of mean length mean_noise_span_length
are replaced by sentinels <extra_id_0>, <extra_id_1>, ...; the target lists each sentinel
and the words it replaced (T5's exact mask arithmetic; internal/text/spancorrupt).
Instances are text with the sentinels written out, which the T5 tokenizer encodes as its
sentinel ids (the end-of-sequence id is the tokenizer's to add). Words, not SentencePiece
pieces, are the unit, so that instances stay readable and tokenizer-independent: spans
therefore never cut a word, unlike T5's.`

func registerSpanCorrupt(r *registry.Registry) {
	r.Add(&registry.StageType{
		Name:    "text.span_corrupt",
		Version: 1,
		Doc:     spanCorruptDoc,
		Params:  SpanCorruptParams{NoiseDensity: spancorrupt.T5.NoiseDensity, MeanSpanLength: spancorrupt.T5.MeanSpanLength, PackWords: 64, Copies: 1},
		Inputs:  []registry.Port{{Name: "input", Kind: registry.KindSentences, Doc: "the corpus"}},
		Outputs: []registry.Port{{Name: "instances", Kind: registry.KindSeq2Seq, Doc: "rows {source, target}: the corrupted text and its sentinel-delimited spans"}},
		Seeded:  true,
		Run:     runSpanCorrupt,
	})
}

// Validate checks the objective's parameters and that a packed sequence
// needs no more sentinels than T5 has.
func (p *SpanCorruptParams) Validate() error {
	var c registry.Checks
	o := spancorrupt.Options{NoiseDensity: p.NoiseDensity, MeanSpanLength: p.MeanSpanLength}
	c.Add(p.NoiseDensity > 0 && p.NoiseDensity < 1, "noise_density", "%g; must be in (0, 1)", p.NoiseDensity)
	c.Add(p.MeanSpanLength >= 1, "mean_noise_span_length", "%g; must be at least 1", p.MeanSpanLength)
	c.NonNegative("pack_words", p.PackWords)
	c.Positive("copies", p.Copies)
	if o.Validate() == nil && p.PackWords > 0 {
		_, spans := o.Counts(p.PackWords)
		c.Add(spans <= tokenizer.NumT5Sentinels, "pack_words", "%d words make %d noise spans, more than T5's %d sentinels", p.PackWords, spans, tokenizer.NumT5Sentinels)
	}
	return c.Result()
}

func runSpanCorrupt(ctx context.Context, env *registry.Env) error {
	p, ok := env.Params.(*SpanCorruptParams)
	if !ok {
		return fmt.Errorf("text.span_corrupt: parameters of type %T", env.Params)
	}
	o := spancorrupt.Options{NoiseDensity: p.NoiseDensity, MeanSpanLength: p.MeanSpanLength}
	in, err := env.Input("input")
	if err != nil {
		return err
	}
	path := in.Path(registry.FileSentences)
	sents, err := rows.Read[rows.Sentence](path)
	if err != nil {
		return err
	}
	seqs, err := packWords(sents, p.PackWords, path)
	if err != nil {
		return err
	}
	out := make([]rows.Seq2Seq, 0, len(seqs)*p.Copies)
	for i, words := range seqs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			env.Report(i, len(seqs), "")
		}
		if _, spans := o.Counts(len(words)); spans > tokenizer.NumT5Sentinels {
			return fmt.Errorf("text.span_corrupt: sequence %d has %d words, which need %d sentinels (T5 has %d): set pack_words", i+1, len(words), spans, tokenizer.NumT5Sentinels)
		}
		for c := 0; c < p.Copies; c++ {
			// One generator per instance, from the seed and its number:
			// an instance does not depend on the ones before it.
			rng := rand.New(rand.NewPCG(uint64(env.Seed), uint64(i*p.Copies+c)))
			src, tgt := spancorrupt.Corrupt(words, o, rng, tokenizer.SentinelText)
			out = append(out, rows.Seq2Seq{Source: strings.Join(src, " "), Target: strings.Join(tgt, " ")})
		}
	}
	env.Report(len(seqs), len(seqs), "")
	return rows.Write(filepath.Join(env.Output("instances"), registry.FileInstances), out)
}

// packWords splits the sentences into words and cuts their concatenation
// into sequences of n words (n = 0: one sequence per sentence). Text that
// already holds a sentinel is refused: its instance could not be told
// from the corruption.
func packWords(sents []rows.Sentence, n int, path string) ([][]string, error) {
	var seqs [][]string
	for i, s := range sents {
		if strings.Contains(s.Text, "<extra_id_") {
			return nil, fmt.Errorf("%s:%d: the text holds a T5 sentinel (<extra_id_N>)", path, i+1)
		}
		if words := strings.Fields(s.Text); len(words) > 0 {
			seqs = append(seqs, words)
		}
	}
	if n > 0 {
		seqs = spancorrupt.Pack(seqs, n)
	}
	if len(seqs) == 0 {
		return nil, fmt.Errorf("%s: no words to corrupt", path)
	}
	return seqs, nil
}
