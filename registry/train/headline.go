package train

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/infocse"
	"repro/internal/model/transformer"
	"repro/internal/rows"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
	"repro/registry"
)

// HeadlineParams are train.headline's parameters. Defaults are InfoCSE's
// fine-tuning settings (Table 5 and Appendix C: lr 2e-5, batch 64, at
// most 20 epochs, early stopping on R@5 with a patience of 2 epochs, 32
// tokens per sentence).
type HeadlineParams struct {
	LearningRate float64 `cty:"learning_rate" doc:"peak learning rate (paper: 2e-5)"`
	BatchSize    int     `cty:"batch_size" doc:"(document, headline) pairs per batch; the other headlines are negatives (paper: 64)"`
	MaxLength    int     `cty:"max_length" doc:"token ids per sentence and per headline, [CLS] and [SEP] included (paper: 32)"`
	MaxSentences int     `cty:"max_sentences" doc:"a document is the mean of its first max_sentences sentence vectors during training; 0 = all (evaluation always uses all)"`
	Contrast
	Epochs   int `cty:"epochs" doc:"passes over the labelled documents at most (paper: 20)"`
	MaxSteps int `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	Validation
	Optimisation `doc.eval_every:"updates between validation evaluations; 0 = at the end of each epoch (the paper's patience is counted in epochs)"`
	Dropout      float64 `cty:"dropout" doc:"hidden and attention dropout"`
	Pooling      string  `cty:"pooling" doc:"sentence vector: cls | cls_before_pooler | mean | first_last_avg | top2_avg"`

	Architecture
}

func headlineType() *registry.StageType {
	return &registry.StageType{
		Name:    "train.headline",
		Version: 1,
		Doc: `InfoCSE's few-shot fine-tuning (section 4, Table 2) on (document, headline) pairs: a
document's vector is the mean of its sentence vectors (as evaluate.retrieval computes it), scored
against every headline of the batch (inner product, cosine / temperature as an option) with
cross-entropy on its own headline. A document without a headline is an error naming its row.`,
		Params: HeadlineParams{
			LearningRate: 2e-5, BatchSize: 64, MaxLength: 32,
			Contrast: Contrast{Similarity: string(infocse.Dot), Temperature: 1},
			Epochs:   20, Validation: Validation{ValidationK: 5, ValidationSimilarity: string(infocse.Cosine)},
			Optimisation: Optimisation{EvalEvery: 0, Patience: 2, GradClip: 1, Accumulation: 1, Precision: "fp32"},
			Dropout:      0.1, Pooling: string(transformer.PoolCLSBeforePooler),
			Architecture: DefaultArchitecture(),
		},
		Inputs:    contrastPorts(registry.KindDocuments, "labelled documents: sentences and headline (data.fewshot_split's labeled)"),
		Outputs:   modelOutput,
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*HeadlineParams).externals(), nil },
		Run:       runHeadline,
		Cost:      headlineCost,
	}
}

func runHeadline(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*HeadlineParams)
	pool, cosine := trainPooling(p.Pooling), p.Similarity == string(infocse.Cosine)
	spec := p.Spec(p.Dropout, pool)
	docs, path, err := readData[rows.Document](env, registry.FileDocuments)
	if err != nil {
		return err
	}
	var corpus []string
	for i, d := range docs {
		if d.Headline == "" {
			return fmt.Errorf("data: %s row %d (id %q): no headline: few-shot fine-tuning trains on (document, headline) pairs; give it a labelled corpus (data.fewshot_split's labeled), not unlabeled documents such as the Brown Corpus", path, i+1, d.ID)
		}
		if len(d.Sentences) == 0 {
			return fmt.Errorf("data: %s row %d (id %q): no sentences", path, i+1, d.ID)
		}
		corpus = append(corpus, d.Headline)
		corpus = append(corpus, d.Sentences...)
	}
	val, err := loadValidation(env)
	if err != nil {
		return err
	}
	m, err := BuildModel(env, spec, corpus)
	if err != nil {
		return err
	}
	heads := make([]string, len(docs))
	sents := make([][][]int, len(docs))
	for i, d := range docs {
		heads[i] = d.Headline
		ss := d.Sentences
		if p.MaxSentences > 0 && len(ss) > p.MaxSentences {
			ss = ss[:p.MaxSentences]
		}
		sents[i] = m.Tokenize(ss, p.MaxLength)
	}
	hs := m.Tokenize(heads, p.MaxLength)
	temp := float32(p.Temperature)
	step := func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		n := len(batch)
		var seqs [][]int
		counts := make([]int, n)
		right := make([][]int, n)
		for k, i := range batch {
			seqs = append(seqs, sents[i]...)
			counts[k] = len(sents[i])
			right[k] = hs[i]
		}
		zs, err := m.Embed(seqs, pool, rng)
		if err != nil {
			return nil, err
		}
		// Document vectors: a constant averaging matrix [n, S] times the
		// sentence vectors [S, D] (a mean per document, differentiable).
		avg := make([]float32, n*len(seqs))
		col := 0
		for k, c := range counts {
			for j := 0; j < c; j++ {
				avg[k*len(seqs)+col] = 1 / float32(c)
				col++
			}
		}
		zd := tensor.MatMul(tensor.New(n, len(seqs), avg), zs, false, false)
		zh, err := m.Embed(right, pool, rng)
		if err != nil {
			return nil, err
		}
		return loss.InfoNCEMasked(zd, zh, temp, cosine, nil)
	}
	return fitAndSave(ctx, env, m, pool, p.MaxLength, "train.headline", len(docs), step,
		recallEval(val, m, p.Validation), p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps))
}
