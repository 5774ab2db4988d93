package synth

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/gense"
	"repro/internal/model/lm"
	"repro/internal/prompt"
	"repro/internal/retrieve"
	"repro/internal/rows"
	"repro/registry"
)

// RetrievalParams are synth.retrieval_pairs' parameters.
type RetrievalParams struct {
	K1        float64 `cty:"k1" doc:"BM25 term-frequency saturation (Elasticsearch's default 1.2, as AugSBERT ran)"`
	B         float64 `cty:"b" doc:"BM25 length normalisation, in [0, 1] (Elasticsearch's default 0.75)"`
	TopK      int     `cty:"top_k" doc:"candidate partners per sentence: BM25's best, the sentence itself and its exact duplicates excluded"`
	Template  string  `cty:"template" doc:"the labeller's prompt: [X1] the sentence, [X2] the retrieved one (GenSE's T_d when the discriminator labels)"`
	Threshold float64 `cty:"threshold" doc:"keep a pair when the labeller's P(entailment), normalised over the two labels, reaches this, in [0, 1]"`
	True      string  `cty:"true_label" doc:"the target text meaning entailment"`
	False     string  `cty:"false_label" doc:"the target text meaning not entailment"`
	BatchSize int     `cty:"batch_size" doc:"prompts scored together"`
	Show      int     `cty:"show" doc:"kept and dropped pairs shown in samples.md (a seeded sample)"`
	// RawLogprobs came after results were cached (key:"added"): at its
	// default (off) the outputs are byte for byte what they were.
	RawLogprobs bool `cty:"raw_logprobs" key:"added" doc:"also write the labeller's raw log-probabilities: every row of candidates.jsonl gets logprobs (each label's sum and per-token values; p_true is computed from the sums), and options.json gives each label's token ids and says that no end token after the label is scored; off (the default) leaves the outputs as before. The paper profiles turn it on"`
}

// Validate checks the parameters at load time.
func (p *RetrievalParams) Validate() error {
	var c registry.Checks
	c.Add(p.K1 >= 0 && !math.IsInf(p.K1, 1), "k1", "%v; must be a finite number >= 0", p.K1)
	c.Add(p.B >= 0 && p.B <= 1, "b", "%v is outside [0, 1]", p.B)
	c.Positive("top_k", p.TopK)
	if math.IsNaN(p.Threshold) || p.Threshold < 0 || p.Threshold > 1 {
		c.Add(false, "threshold", "%v is outside [0, 1] (a probability threshold)", p.Threshold)
	}
	checkLabelling(&c, p.Template, p.True, p.False, p.BatchSize, p.Show)
	return c.Result()
}

// FileCandidates holds every retrieved candidate pair with its BM25 score,
// rank, the labeller's probability and whether it was kept.
const FileCandidates = "candidates.jsonl"

type candidateRow struct {
	gense.RetrievedPair
	PTrue float64 `json:"p_true"`
	Kept  bool    `json:"kept"`
	// Logprobs (raw_logprobs only) are the scores PTrue comes from.
	Logprobs *LabelLogprobs `json:"logprobs,omitempty"`
}

func retrievalType() *registry.StageType {
	return &registry.StageType{
		Name:    "synth.retrieval_pairs",
		Version: 1,
		Doc: `The retrieval baseline of GenSE's Table 8 (Thakur et al. 2021a, AugSBERT): for each sentence of data,
BM25 (Okapi, Lucene's idf, an inverted index; repro/internal/retrieve) over corpus (data itself when
corpus is absent) proposes its top_k partners, the sentence itself and its exact duplicates excluded,
each unordered pair once; a cross-encoder labels every pair by the log-probabilities of the label
sequences true_label and false_label under template, normalised over the two, and the pairs whose
P(entailment) reaches threshold are kept. Retrieval gives no contradictions: the triplets have an empty
negative (train them with hard_negatives = false, GenSE eq. 3). The model input is any text-to-text
language model trained on NLI; GenSE's generator/discriminator with T_d is one (the paper's labeller
was a separately trained cross-encoder). Outputs: the kept pairs (triplets.jsonl), every candidate
(candidates.jsonl), samples.md, why_empty.txt when none is kept; metrics: sentences, no_hit,
repeated, candidates, kept, pass_rate, mean_p_true. A label's score is the sum of its tokens'
log-probabilities, the label encoded without special tokens: no end token after it is scored. With
raw_logprobs (off by default, so outputs cached before it are unchanged; the paper profiles turn it
on) candidates.jsonl also holds each label's sum and per-token log-probabilities and options.json the
labels' token ids and that no end token is scored.`,
		Params: RetrievalParams{K1: retrieve.DefaultParams.K1, B: retrieve.DefaultParams.B, TopK: 3,
			Template: `if "[X1]", does this mean that "[X2]"? true or false`, Threshold: gense.PaperAlpha,
			True: "true", False: "false", BatchSize: 32, Show: 10},
		Inputs: []registry.Port{
			{Name: "model", Kind: registry.KindLanguageModel, Doc: "the labeller: a text-to-text model trained on the NLI triplets"},
			{Name: "data", Kind: registry.KindSentences, Doc: "the unlabeled sentences to find partners for"},
			{Name: "corpus", Kind: registry.KindSentences, Optional: true, Doc: "the sentences BM25 searches (absent: data)"},
		},
		Outputs: []registry.Port{
			{Name: "triplets", Kind: registry.KindTriplets, Doc: "triplets.jsonl (kept pairs, empty negative), candidates.jsonl, samples.md"},
			{Name: "metrics", Kind: registry.KindMetrics, Doc: "sentences, no_hit, repeated, candidates, kept, pass_rate, mean_p_true"},
		},
		Seeded: true,
		Tensor: true,
		Run:    runRetrieval,
	}
}

func runRetrieval(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*RetrievalParams)
	if err := p.Validate(); err != nil {
		return err
	}
	td := prompt.MustParse(p.Template, 2)
	queries, err := registry.ReadSentences(env, "data", 0)
	if err != nil {
		return err
	}
	corpus := queries
	if _, ok := env.Inputs["corpus"]; ok {
		if corpus, err = registry.ReadSentences(env, "corpus", 0); err != nil {
			return err
		}
	}
	pairs, rc, err := gense.RetrievePairs(queries, corpus, retrieve.Params{K1: p.K1, B: p.B}, p.TopK)
	if err != nil {
		return fmt.Errorf("retrieval: %w", err)
	}
	log := env.Logger()
	log.Info("bm25", "sentences", rc.Queries, "corpus", len(corpus), "top_k", p.TopK, "no_hit", rc.NoHit, "repeated", rc.Repeated, "candidates", rc.Candidates)
	pTrue := make([]float64, len(pairs))
	raw := make([]*LabelLogprobs, len(pairs))
	var opts *OptionsDoc
	if len(pairs) > 0 || p.RawLogprobs {
		ma, err := env.Input("model")
		if err != nil {
			return err
		}
		model, err := lm.Open(ma.Dir)
		if err != nil {
			return fmt.Errorf("model: %w", err)
		}
		if p.RawLogprobs {
			d := optionsDoc(model, p.True, p.False, "p_true = 1 / (1 + exp(false_label.sum - true_label.sum))")
			opts = &d
		}
		prompts := make([]string, len(pairs))
		for i, q := range pairs {
			prompts[i] = td.Fill(q.Anchor, q.Partner)
		}
		if len(pairs) > 0 {
			sc, err := model.ScoreOptionTokens(ctx, prompts, []string{p.True, p.False}, false, p.BatchSize)
			if err != nil {
				return fmt.Errorf("labeller: %w", err)
			}
			for i := range pairs {
				pTrue[i] = gense.Normalised(sc.Sum(i, 0), sc.Sum(i, 1))
				if p.RawLogprobs {
					raw[i] = labelLogprobs(sc, i)
				}
			}
		}
	}
	keep, lc := gense.KeepEntailed(pTrue, p.Threshold)
	log.Info("retrieval labelled", "candidates", lc.Labelled, "kept", lc.Kept, "threshold", p.Threshold,
		"pass_rate", fmt.Sprintf("%.3f", lc.PassRate), "mean_p_true", fmt.Sprintf("%.3f", lc.MeanPTrue))
	cands := make([]candidateRow, len(pairs))
	var kept []rows.Triplet
	for i, q := range pairs {
		cands[i] = candidateRow{RetrievedPair: q, PTrue: pTrue[i], Kept: keep[i], Logprobs: raw[i]}
		if keep[i] {
			kept = append(kept, rows.Triplet{Anchor: q.Anchor, Positive: q.Partner})
		}
	}
	dir := env.Output("triplets")
	if err := rows.Write(filepath.Join(dir, registry.FileTriplets), kept); err != nil {
		return err
	}
	if err := rows.Write(filepath.Join(dir, FileCandidates), cands); err != nil {
		return err
	}
	if opts != nil {
		if err := registry.WriteJSON(filepath.Join(dir, FileOptions), opts); err != nil {
			return err
		}
	}
	if len(kept) == 0 {
		why := fmt.Sprintf("the retrieval baseline kept 0 of %d BM25 candidate pairs from %d sentences (%d without a partner) at threshold %g (mean P(entailment) %.3f): lower the threshold, retrieve more candidates (top_k) or search a larger corpus",
			lc.Labelled, rc.Queries, rc.NoHit, p.Threshold, lc.MeanPTrue)
		if err := os.WriteFile(filepath.Join(dir, registry.FileWhyEmpty), []byte(why+"\n"), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, registry.FileSamples), []byte(retrievalSamples(cands, rc, lc, p.Show, env.Seed)), 0o644); err != nil {
		return err
	}
	return registry.WriteJSON(filepath.Join(env.Output("metrics"), registry.FileMetrics), map[string]any{
		"sentences": rc.Queries, "corpus": len(corpus), "no_hit": rc.NoHit, "repeated": rc.Repeated,
		"candidates": rc.Candidates, "kept": lc.Kept, "threshold": p.Threshold,
		"pass_rate": lc.PassRate, "mean_p_true": lc.MeanPTrue,
	})
}

// retrievalSamples is the readable excerpt: up to show kept and show
// dropped candidates, drawn by a permutation seeded from seed.
func retrievalSamples(cands []candidateRow, rc gense.RetrievalCounts, lc gense.LabelCounts, show int, seed int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "BM25 retrieval: %d sentences, %d without a partner, %d candidate pairs (%d repeated pairs dropped). ",
		rc.Queries, rc.NoHit, rc.Candidates, rc.Repeated)
	fmt.Fprintf(&b, "Labelled entailment at P >= %g: %d kept (pass rate %.3f, mean P %.3f). A seeded sample (seed %d):\n\n",
		lc.Threshold, lc.Kept, lc.PassRate, lc.MeanPTrue, seed)
	b.WriteString("| kept | sentence | retrieved (rank, BM25) | P(entailment) |\n|---|---|---|---|\n")
	nk, nd := 0, 0
	for _, i := range permutation(len(cands), seed) {
		c := cands[i]
		if (c.Kept && nk >= show) || (!c.Kept && nd >= show) {
			continue
		}
		mark := "yes"
		if c.Kept {
			nk++
		} else {
			nd++
			mark = "no"
		}
		fmt.Fprintf(&b, "| %s | %s | %s (%d, %.2f) | %.3f |\n", mark, cell(c.Anchor), cell(c.Partner), c.Rank, c.BM25, c.PTrue)
	}
	return b.String()
}
