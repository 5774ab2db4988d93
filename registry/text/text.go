// Package text registers the text-processing stage types of PaSeR's data
// preparation (paper section 3.1):
//
//	text.mask_phrases  sentences -> masked pairs (duplicate and mask)
//	text.eda           masked pairs -> masked pairs (EDA on s and s')
//	text.span_corrupt  sentences -> seq2seq instances (T5's span corruption)
//	text.unigram_vocab sentences -> tokenizer (a SentencePiece Unigram model)
//
// and of text-to-text training data (seq2seq.go):
//
//	text.seq2seq       triplets -> seq2seq instances (prompt templates, GenSE's Table 1)
//
// The stage types only decode parameters and move rows; the algorithms are
// in internal/text's packages. Masked pairs are a kind of their own
// (registry.KindMaskedPairs): rows {"sentence", "masked", "targets"} in
// pairs.jsonl, the row type internal/text/mask.MaskedPair.
//
// The noun/verb-phrase methods train a part-of-speech tagger on the Brown
// Corpus from the data directory when they run (about five seconds, once
// per process) rather than shipping a model file: the training is
// deterministic, so the corpus and the code fix the model, and nothing
// opaque enters the repository. WordNet is read from REPRO_WORDNET_DIR or
// /usr/share/wordnet.
package text

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"

	"repro/internal/dataset"
	"repro/internal/rows"
	"repro/internal/text/chunk"
	"repro/internal/text/eda"
	"repro/internal/text/mask"
	"repro/internal/text/postag"
	"repro/internal/text/rake"
	"repro/internal/text/wordnet"
	"repro/registry"
)

// MaskParams are text.mask_phrases's parameters.
type MaskParams struct {
	Method string `cty:"method" doc:"phrases to mask: rake (top_k best RAKE phrases), np, vp or np+vp (the noun phrases / verb groups of a Brown-trained tagger and chunker: every one, or one drawn at random with one_chunk)"`
	TopK   int    `cty:"top_k" doc:"RAKE only: how many of the best phrases to mask (paper: 1-5; Table 5)"`
	// OneChunk and DrawSeed came after results were cached (key:"added"):
	// at their defaults, every chunk masked, the keys are the old ones.
	OneChunk bool  `cty:"one_chunk" key:"added" doc:"np, vp and np+vp: mask ONE chunk of those kinds per sentence, drawn at random with draw_seed (the paper's \"a random sub-tree\", section 3.1.1; with np+vp one of either kind), instead of every chunk; RAKE ranks its phrases and ignores it"`
	DrawSeed int64 `cty:"draw_seed" key:"added" doc:"one_chunk only: the seed of the draws (row i draws with PCG(draw_seed, i)). A parameter rather than the stage's seed, which this type's key does not hold: set it to var.seed"`
}

// EDAParams are text.eda's parameters. Defaults are the paper's best
// setting (Table 4: synonym replacement alone) with EDA's alpha 0.1, since
// the paper gives no strengths.
type EDAParams struct {
	SynonymReplacement float64 `cty:"synonym_replacement" doc:"EDA alpha_sr: fraction of words replaced by WordNet synonyms (0 disables)"`
	RandomDeletion     float64 `cty:"random_deletion" doc:"EDA p_rd: per-word deletion probability (0 disables)"`
	RandomSwap         float64 `cty:"random_swap" doc:"EDA alpha_rs: random swaps as a fraction of words (0 disables)"`
}

// Register adds the text stage types to r.
func Register(r *registry.Registry) {
	r.Add(seq2seqType())
	r.Add(&registry.StageType{
		Name:    "text.mask_phrases",
		Version: 1,
		Doc:     "Duplicate each sentence and mask its important phrases (PaSeR 3.1.2): RAKE top-k, or noun/verb phrases.",
		Params:  MaskParams{Method: "rake", TopK: 3},
		Inputs:  []registry.Port{{Name: "input", Kind: registry.KindSentences, Doc: "sentences to duplicate and mask"}},
		Outputs: []registry.Port{{Name: "pairs", Kind: registry.KindMaskedPairs, Doc: "rows {sentence, masked, targets}"}},
		Run:     runMask,
	})
	r.Add(&registry.StageType{
		Name:    "text.eda",
		Version: 1,
		Doc:     "EDA (Wei and Zou 2019) on both the sentence and its masked duplicate, masks untouched (PaSeR 3.1.3).",
		Params:  EDAParams{SynonymReplacement: 0.1},
		Inputs:  []registry.Port{{Name: "input", Kind: registry.KindMaskedPairs, Doc: "masked pairs"}},
		Outputs: []registry.Port{{Name: "pairs", Kind: registry.KindMaskedPairs, Doc: "augmented masked pairs; targets unchanged"}},
		Seeded:  true,
		// The system's WordNet is read by synonym replacement: its content
		// is in the key, so another WordNet re-runs the stage.
		Externals: func(p any) ([]registry.External, error) {
			if p.(*EDAParams).SynonymReplacement == 0 {
				return nil, nil
			}
			dir, err := wordnet.Dir()
			if err != nil {
				return nil, err
			}
			return []registry.External{{Name: "wordnet", Path: dir}}, nil
		},
		Run: runEDA,
	})
	registerSpanCorrupt(r)
	registerUnigramVocab(r)
}

func runMask(ctx context.Context, env *registry.Env) error {
	p, ok := env.Params.(*MaskParams)
	if !ok {
		return fmt.Errorf("text.mask_phrases: parameters of type %T", env.Params)
	}
	// maskOne masks row i, sentence s.
	var maskOne func(i int, s string) (mask.MaskedPair, error)
	switch p.Method {
	case "rake":
		maskOne = func(_ int, s string) (mask.MaskedPair, error) { return rake.MaskTopK(s, p.TopK) }
	case "np", "vp", "np+vp":
		tg, err := brownTagger()
		if err != nil {
			return fmt.Errorf("text.mask_phrases: method %q: %w", p.Method, err)
		}
		np, vp := p.Method != "vp", p.Method != "np"
		maskOne = func(_ int, s string) (mask.MaskedPair, error) { return chunk.Mask(s, tg, np, vp) }
		if p.OneChunk {
			// One generator per row, from draw_seed and the row number: a
			// row's draw does not depend on the rows before it.
			maskOne = func(i int, s string) (mask.MaskedPair, error) {
				return chunk.MaskOne(s, tg, np, vp, rand.New(rand.NewPCG(uint64(p.DrawSeed), uint64(i))))
			}
		}
	default:
		return fmt.Errorf("text.mask_phrases: method %q: must be rake, np, vp or np+vp", p.Method)
	}
	in, err := env.Input("input")
	if err != nil {
		return err
	}
	sents, err := rows.Read[rows.Sentence](in.Path(registry.FileSentences))
	if err != nil {
		return err
	}
	out := make([]mask.MaskedPair, len(sents))
	for i, s := range sents {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			env.Report(i, len(sents), "")
		}
		out[i], err = maskOne(i, s.Text)
		if err != nil {
			return fmt.Errorf("%s:%d: %v", in.Path(registry.FileSentences), i+1, err)
		}
	}
	env.Report(len(sents), len(sents), "")
	return rows.Write(filepath.Join(env.Output("pairs"), registry.FilePairs), out)
}

func runEDA(ctx context.Context, env *registry.Env) error {
	p, ok := env.Params.(*EDAParams)
	if !ok {
		return fmt.Errorf("text.eda: parameters of type %T", env.Params)
	}
	var syn eda.Synonyms = noSynonyms{}
	if p.SynonymReplacement > 0 {
		wn, err := openWordNet()
		if err != nil {
			return fmt.Errorf("text.eda: synonym_replacement needs WordNet: %w", err)
		}
		syn = wn
	}
	aug := eda.New(syn)
	opt := eda.Options{SynonymReplacement: p.SynonymReplacement, RandomDeletion: p.RandomDeletion, RandomSwap: p.RandomSwap}
	in, err := env.Input("input")
	if err != nil {
		return err
	}
	path := in.Path(registry.FilePairs)
	pairs, err := rows.Read[mask.MaskedPair](path)
	if err != nil {
		return err
	}
	for i := range pairs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			env.Report(i, len(pairs), "")
		}
		// One generator per row, from the seed and the row number: a row's
		// augmentation does not depend on the rows before it.
		rng := rand.New(rand.NewPCG(uint64(env.Seed), uint64(i)))
		pairs[i].Sentence = aug.Augment(pairs[i].Sentence, opt, rng)
		pairs[i].Masked = aug.Augment(pairs[i].Masked, opt, rng)
	}
	env.Report(len(pairs), len(pairs), "")
	return rows.Write(filepath.Join(env.Output("pairs"), registry.FilePairs), pairs)
}

type noSynonyms struct{}

func (noSynonyms) Synonyms(string) []string { return nil }

// The tagger and WordNet are loaded once per process and shared: both are
// read-only once built.
var (
	tagMu    sync.Mutex
	taggers  = map[string]*postag.Tagger{}
	wnMu     sync.Mutex
	wordnets = map[string]*wordnet.WordNet{}
)

// brownTagger trains (once per process) the tagger on the Brown Corpus of
// the dataset catalogue, whose checksum pins the file: the tagger, and so
// the stage's output, is fixed by the code and that checksum, which keeps
// the stage's key sound.
func brownTagger() (*postag.Tagger, error) {
	path, err := dataset.Default().Path("brown", "documents")
	if err != nil {
		return nil, fmt.Errorf("the Brown Corpus: %w", err)
	}
	tagMu.Lock()
	defer tagMu.Unlock()
	if tg, ok := taggers[path]; ok {
		return tg, nil
	}
	tg, err := postag.TrainBrown(path, postag.DefaultOptions)
	if err != nil {
		return nil, err
	}
	taggers[path] = tg
	return tg, nil
}

func openWordNet() (*wordnet.WordNet, error) {
	dir, err := wordnet.Dir()
	if err != nil {
		return nil, err
	}
	wnMu.Lock()
	defer wnMu.Unlock()
	if wn, ok := wordnets[dir]; ok {
		return wn, nil
	}
	wn, err := wordnet.Open(dir)
	if err != nil {
		return nil, err
	}
	wordnets[dir] = wn
	return wn, nil
}
