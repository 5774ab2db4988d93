package text

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"repro/internal/model/checkpoint"
	"repro/internal/model/tokenizer"
	"repro/internal/rows"
	"repro/registry"
)

// UnigramVocabParams are text.unigram_vocab's parameters.
type UnigramVocabParams struct {
	VocabSize         int     `cty:"vocab_size" doc:"pieces in the model, pad, eos and unk included (T5: 32000), sentinels not"`
	Sentinels         int     `cty:"sentinels" doc:"<extra_id_N> sentinels appended after the pieces (T5: 100)"`
	CharacterCoverage float64 `cty:"character_coverage" doc:"share of character occurrences the model's characters cover; rarer characters become <unk> (sentencepiece: 0.9995)"`
	MaxSentences      int     `cty:"max_sentences" doc:"train on the first N sentences; 0 = all"`
}

// FilePieces is a tokenizer artifact's readable piece list.
const FilePieces = "pieces.tsv"

func registerUnigramVocab(r *registry.Registry) {
	r.Add(&registry.StageType{
		Name:    "text.unigram_vocab",
		Version: 1,
		Doc: `Train a SentencePiece Unigram vocabulary (Kudo 2018; sentencepiece's trainer: seed substrings,
EM, likelihood-loss pruning) on the sentences, normalised with nmt_nfkc, in T5's layout (pad 0,
eos 1, unk 2, sentinels after the pieces). The artifact is spiece.model + tokenizer_config.json,
which sentencepiece and Hugging Face's T5Tokenizer open, plus pieces.tsv.`,
		Params:  UnigramVocabParams{VocabSize: 8000, Sentinels: tokenizer.NumT5Sentinels, CharacterCoverage: 0.9995},
		Inputs:  []registry.Port{{Name: "input", Kind: registry.KindSentences, Doc: "training sentences"}},
		Outputs: []registry.Port{{Name: "tokenizer", Kind: registry.KindTokenizer, Doc: "spiece.model, tokenizer_config.json, pieces.tsv"}},
		Run:     runUnigramVocab,
	})
}

// Validate checks the sizes and the coverage.
func (p *UnigramVocabParams) Validate() error {
	var c registry.Checks
	c.Add(p.VocabSize >= 10, "vocab_size", "%d is too small (3 specials come first)", p.VocabSize)
	c.NonNegative("sentinels", p.Sentinels)
	c.Add(p.CharacterCoverage > 0 && p.CharacterCoverage <= 1, "character_coverage", "%g; must be in (0, 1]", p.CharacterCoverage)
	c.NonNegative("max_sentences", p.MaxSentences)
	return c.Result()
}

func runUnigramVocab(ctx context.Context, env *registry.Env) error {
	p, ok := env.Params.(*UnigramVocabParams)
	if !ok {
		return fmt.Errorf("text.unigram_vocab: parameters of type %T", env.Params)
	}
	in, err := env.Input("input")
	if err != nil {
		return err
	}
	sents, err := rows.Read[rows.Sentence](in.Path(registry.FileSentences))
	if err != nil {
		return err
	}
	if p.MaxSentences > 0 && len(sents) > p.MaxSentences {
		sents = sents[:p.MaxSentences]
	}
	texts := make([]string, len(sents))
	for i, s := range sents {
		texts[i] = s.Text
	}
	env.Report(0, 1, "training")
	m, err := tokenizer.TrainUnigram(texts, tokenizer.UnigramTrainOptions{VocabSize: p.VocabSize, CharacterCoverage: p.CharacterCoverage})
	if err != nil {
		return fmt.Errorf("text.unigram_vocab: %s: %w", in.Path(registry.FileSentences), err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	tok, err := tokenizer.NewSentencePiece(m, p.Sentinels)
	if err != nil {
		return fmt.Errorf("text.unigram_vocab: %w", err)
	}
	dir := env.Output("tokenizer")
	if err := checkpoint.SaveTokenizer(dir, tok, 0); err != nil {
		return err
	}
	var b strings.Builder
	for i, piece := range m.Pieces {
		b.WriteString(piece)
		b.WriteByte('\t')
		b.WriteString(strconv.FormatFloat(float64(m.Scores[i]), 'g', -1, 32))
		b.WriteByte('\n')
	}
	env.Report(1, 1, fmt.Sprintf("%d pieces", len(m.Pieces)))
	return os.WriteFile(filepath.Join(dir, FilePieces), []byte(b.String()), 0o644)
}
