package train

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/model/transformer"
	"repro/internal/rows"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
	"repro/registry"
)

// RegisterCosine adds the bi-encoder regression trainer (train.cosine_mse).
func RegisterCosine(r *registry.Registry) { r.Add(cosineType()) }

// CosineParams are train.cosine_mse's parameters; the defaults are
// Sentence-BERT's regression settings as DINO uses them (Reimers and
// Gurevych 2019: lr 2e-5, mean pooling; DINO: batch 32, at most one epoch,
// the best of the evaluations on the STS-L validation split kept), except
// warm-up and weight decay, whose defaults (none) are what results were
// recorded with: sentence-transformers' 10% warm-up and weight decay 0.01
// are warmup_ratio = 0.1 and weight_decay = 0.01 (experiments/dino.hcl's
// paper profile).
type CosineParams struct {
	LearningRate float64 `cty:"learning_rate" doc:"peak learning rate (Sentence-BERT: 2e-5)"`
	BatchSize    int     `cty:"batch_size" doc:"pairs per batch"`
	MaxLength    int     `cty:"max_length" doc:"token ids per sentence, special tokens included"`
	Epochs       int     `cty:"epochs" doc:"passes over the data (max_steps > 0 overrides)"`
	MaxSteps     int     `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	MaxPairs     int     `cty:"max_pairs" doc:"train on the first N pairs; 0 = all"`
	Optimisation `doc.eval_every:"updates between evaluations on dev (Spearman; DINO: the STS-L validation split)"`
	// WarmupRatio came after results were cached (key:"added"): at 0 the
	// warm-up is warmup's updates, as before.
	WarmupRatio float64 `cty:"warmup_ratio" key:"added" doc:"warm-up as a share of the run's updates, rounded up, counted from the data the run has (Sentence-BERT: 0.1, ceil(10% of the updates)); 0 = warmup's count of updates. Give one of the two"`
	Dropout     float64 `cty:"dropout" doc:"hidden and attention dropout"`
	Pooling     string  `cty:"pooling" doc:"cls | cls_before_pooler | mean | first_last_avg | top2_avg (Sentence-BERT: mean)"`

	Architecture
}

// Validate checks every parameter (at load time).
func (p *CosineParams) Validate() error {
	var c registry.Checks
	checkEncoderInput(&c, p.MaxLength, p.Dropout)
	checkPooling(&c, "pooling", p.Pooling, false)
	c.NonNegative("max_pairs", p.MaxPairs)
	p.loop().validate(&c)
	p.Architecture.validate(&c)
	return c.Result()
}

// loop is the training loop of p: Optimisation's and the warm-up ratio.
func (p *CosineParams) loop() LoopSpec {
	l := p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps)
	l.WarmupRatio = p.WarmupRatio
	return l
}

func cosineType() *registry.StageType {
	o := DefaultOptimisation()
	o.EvalEvery = 100
	return &registry.StageType{
		Name:    "train.cosine_mse",
		Version: 1,
		Doc: `A bi-encoder trained on cosine-similarity regression (Sentence-BERT's regression objective, as
DINO trains Sentence-RoBERTa): both sentences of a pair are encoded by the same encoder and pooled,
and the loss is the mean squared error between their cosine and the pair's label. With dev
connected (DINO: the STS-L validation split), Spearman is measured every eval_every updates and the
best weights are kept.`,
		Params: CosineParams{LearningRate: 2e-5, BatchSize: 32, MaxLength: 64, Epochs: 1, Optimisation: o,
			Dropout: 0.1, Pooling: string(transformer.PoolMean), Architecture: DefaultArchitecture()},
		Inputs:    modelPorts(registry.KindPairs, "labelled pairs: sentence1, sentence2, label (a similarity in [0, 1]); extra keys are ignored"),
		Outputs:   modelOutput,
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*CosineParams).externals(), nil },
		Run:       runCosine,
		Cost:      cosineCost,
	}
}

// scoredPair is the part of a pairs row this trainer reads (generated
// pairs carry provenance keys besides).
type scoredPair struct {
	Sentence1, Sentence2 string
	Label                float64
}

func readScoredPairs(env *registry.Env, max int) ([]scoredPair, error) {
	a, err := env.Input("data")
	if err != nil {
		return nil, err
	}
	path := a.Path(registry.FilePairs)
	ps, err := rows.Read[rows.GeneratedPair](path)
	if err != nil {
		// A plain pairs artifact (rows.Pair) has no provenance keys.
		plain, perr := rows.Read[rows.Pair](path)
		if perr != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		ps = make([]rows.GeneratedPair, len(plain))
		for i, p := range plain {
			ps[i] = rows.GeneratedPair{Sentence1: p.Sentence1, Sentence2: p.Sentence2, Label: p.Label}
		}
	}
	if max > 0 && len(ps) > max {
		ps = ps[:max]
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("data: %s: no pairs", path)
	}
	out := make([]scoredPair, len(ps))
	for i, p := range ps {
		if strings.TrimSpace(p.Sentence1) == "" || strings.TrimSpace(p.Sentence2) == "" {
			return nil, fmt.Errorf("data: %s: row %d: empty sentence", path, i+1)
		}
		if !(p.Label >= -1 && p.Label <= 1) {
			return nil, fmt.Errorf("data: %s: row %d: label %v outside [-1, 1] (a cosine target)", path, i+1, p.Label)
		}
		out[i] = scoredPair{p.Sentence1, p.Sentence2, p.Label}
	}
	return out, nil
}

func runCosine(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*CosineParams)
	pool := trainPooling(p.Pooling)
	ps, err := readScoredPairs(env, p.MaxPairs)
	if err != nil {
		return err
	}
	dev, err := LoadDev(env)
	if err != nil {
		return err
	}
	corpus := make([]string, 0, 2*len(ps))
	for _, q := range ps {
		corpus = append(corpus, q.Sentence1, q.Sentence2)
	}
	m, err := BuildModel(env, p.Spec(p.Dropout, pool), corpus)
	if err != nil {
		return err
	}
	left, right := make([]string, len(ps)), make([]string, len(ps))
	labels := make([]float32, len(ps))
	for i, q := range ps {
		left[i], right[i], labels[i] = q.Sentence1, q.Sentence2, float32(q.Label)
	}
	a, b := m.Tokenize(left, p.MaxLength), m.Tokenize(right, p.MaxLength)
	step := func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		// Both sides in one forward pass (rows 0..n-1 and n..2n-1).
		n := len(batch)
		in := make([][]int, 0, 2*n)
		ls := make([]float32, n)
		for k, i := range batch {
			in = append(in, a[i])
			ls[k] = labels[i]
		}
		for _, i := range batch {
			in = append(in, b[i])
		}
		z, err := m.Embed(in, pool, rng)
		if err != nil {
			return nil, err
		}
		return loss.CosineMSE(tensor.SliceRows(z, 0, n), tensor.SliceRows(z, n, 2*n), ls)
	}
	m.Pooling = pool
	res, err := Fit(ctx, env, m, len(ps), step, dev, p.loop())
	if err != nil {
		return err
	}
	return SaveModel(env, m, pool, "train.cosine_mse", len(ps), res)
}
