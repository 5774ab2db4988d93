package train

import (
	"context"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/contrastive"
	"repro/internal/encoder/pooled"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
	"repro/registry"
)

// SimCSEUnsupParams are train.simcse_unsup's parameters. The defaults are
// SimCSE's unsupervised BERT-base settings (Gao et al. 2021, Appendix A:
// lr 3e-5, batch 64, max length 32, 1 epoch on 1M Wikipedia sentences,
// temperature 0.05, [CLS] with the MLP head during training only, STS-B
// dev evaluation every 250 steps) and BERT-base's shape for a from-scratch
// model.
type SimCSEUnsupParams struct {
	LearningRate float64 `cty:"learning_rate" doc:"peak learning rate (SimCSE: 3e-5 for BERT-base, 1e-5 for RoBERTa-base)"`
	BatchSize    int     `cty:"batch_size" doc:"sentences per batch; each sees the others' views as negatives"`
	MaxLength    int     `cty:"max_length" doc:"token ids per training sentence, [CLS] and [SEP] included"`
	Temperature  float64 `cty:"temperature" doc:"softmax temperature of the contrastive loss"`
	Epochs       int     `cty:"epochs" doc:"passes over the data (max_steps > 0 overrides)"`
	MaxSteps     int     `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	MaxSentences int     `cty:"max_sentences" doc:"train on the first N sentences; 0 = all"`
	Optimisation
	Dropout      float64 `cty:"dropout" doc:"hidden and attention dropout: the source of the two views"`
	Pooling      string  `cty:"pooling" doc:"cls | cls_before_pooler | mean | first_last_avg | top2_avg"`
	MLPOnlyTrain bool    `cty:"mlp_only_train" doc:"with pooling cls: train with the MLP head, evaluate without it"`

	Architecture
}

// SimCSESupParams are train.simcse_sup's parameters; defaults are
// SimCSE's supervised BERT-base settings (lr 5e-5, batch 512, 3 epochs on
// NLI triplets, contradiction as hard negative, [CLS] with the MLP head at
// training and evaluation).
type SimCSESupParams struct {
	LearningRate  float64 `cty:"learning_rate" doc:"peak learning rate (SimCSE: 5e-5 for BERT-base)"`
	BatchSize     int     `cty:"batch_size" doc:"triplets per batch"`
	MaxLength     int     `cty:"max_length" doc:"token ids per training sentence, [CLS] and [SEP] included"`
	Temperature   float64 `cty:"temperature" doc:"softmax temperature of the contrastive loss"`
	HardNegatives bool    `cty:"hard_negatives" doc:"score anchors against the contradictions too (false: SimCSE's w/o hard negative row)"`
	Epochs        int     `cty:"epochs" doc:"passes over the data (max_steps > 0 overrides)"`
	MaxSteps      int     `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	MaxTriplets   int     `cty:"max_triplets" doc:"train on the first N triplets; 0 = all"`
	Optimisation
	Dropout      float64 `cty:"dropout" doc:"hidden and attention dropout"`
	Pooling      string  `cty:"pooling" doc:"cls | cls_before_pooler | mean | first_last_avg | top2_avg"`
	MLPOnlyTrain bool    `cty:"mlp_only_train" doc:"with pooling cls: train with the MLP head, evaluate without it"`

	Architecture
}

func modelPorts(data registry.Kind, dataDoc string) []registry.Port {
	return []registry.Port{
		{Name: "data", Kind: data, Doc: dataDoc},
		{Name: "dev", Kind: registry.KindSTS, Optional: true, Doc: "STS-B dev pairs: evaluate every eval_every updates and keep the best weights (absent: keep the last)"},
		{Name: "init", Kind: registry.KindEncoder, Optional: true, Doc: "a transformer encoder to continue training (overrides hf_checkpoint and the architecture)"},
	}
}

var modelOutput = []registry.Port{{Name: "model", Kind: registry.KindEncoder, Doc: "the trained transformer encoder (checkpoint + encoder.json + training.json)"}}

func simcseUnsupType() *registry.StageType {
	return &registry.StageType{
		Name:    "train.simcse_unsup",
		Version: 1,
		Doc: `Unsupervised SimCSE: each sentence is encoded twice with independent dropout; the two
views are positives and the other sentences' views in the batch negatives (cross-entropy over
cosine / temperature). Pooling cls trains with the MLP head and, with mlp_only_train, evaluates
and saves without it.`,
		Params: SimCSEUnsupParams{
			LearningRate: 3e-5, BatchSize: 64, MaxLength: 32, Temperature: 0.05, Epochs: 1,
			Optimisation: DefaultOptimisation(), Dropout: 0.1, Pooling: string(transformer.PoolCLS), MLPOnlyTrain: true,
			Architecture: DefaultArchitecture(),
		},
		Inputs:    modelPorts(registry.KindSentences, "training sentences"),
		Outputs:   modelOutput,
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*SimCSEUnsupParams).externals(), nil },
		Run:       runUnsup,
		Cost:      simcseUnsupCost,
	}
}

func simcseSupType() *registry.StageType {
	return &registry.StageType{
		Name:    "train.simcse_sup",
		Version: 1,
		Doc: `Supervised SimCSE: anchor (premise) and positive (entailment) are a positive pair; every
other positive in the batch and, with hard_negatives, every contradiction are negatives
(cross-entropy over cosine / temperature).`,
		Params: SimCSESupParams{
			LearningRate: 5e-5, BatchSize: 512, MaxLength: 32, Temperature: 0.05, HardNegatives: true, Epochs: 3,
			Optimisation: DefaultOptimisation(), Dropout: 0.1, Pooling: string(transformer.PoolCLS), MLPOnlyTrain: false,
			Architecture: DefaultArchitecture(),
		},
		Inputs:    modelPorts(registry.KindTriplets, "NLI triplets: anchor, positive (entailment), negative (contradiction)"),
		Outputs:   modelOutput,
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*SimCSESupParams).externals(), nil },
		Run:       runSup,
		Cost:      simcseSupCost,
	}
}

// trainPooling is the pooling named by a validated pooling parameter.
func trainPooling(name string) transformer.Pooling { return transformer.Pooling(name) }

func runUnsup(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*SimCSEUnsupParams)
	pool := trainPooling(p.Pooling)
	spec := p.Spec(p.Dropout, pool)
	sentences, err := registry.ReadSentences(env, "data", p.MaxSentences)
	if err != nil {
		return err
	}
	dev, err := LoadDev(env)
	if err != nil {
		return err
	}
	m, err := BuildModel(env, spec, sentences)
	if err != nil {
		return err
	}
	evalPool := pooled.EvalPooling(pool, p.MLPOnlyTrain)
	seqs := m.Tokenize(sentences, p.MaxLength)
	temp := float32(p.Temperature)
	step := func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		// One forward pass over the batch twice: row i and row n+i are the
		// same sentence under independent dropout masks (SimCSE duplicates
		// the input the same way).
		n := len(batch)
		in := make([][]int, 0, 2*n)
		for _, i := range batch {
			in = append(in, seqs[i])
		}
		for _, i := range batch {
			in = append(in, seqs[i])
		}
		z, err := m.Embed(in, pool, rng)
		if err != nil {
			return nil, err
		}
		return loss.SimCSEUnsup(tensor.SliceRows(z, 0, n), tensor.SliceRows(z, n, 2*n), temp)
	}
	// Evaluation during training uses the evaluation pooling.
	m.Pooling = evalPool
	res, err := Fit(ctx, env, m, len(seqs), step, dev, p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps))
	if err != nil {
		return err
	}
	return SaveModel(env, m, evalPool, "train.simcse_unsup", len(seqs), res)
}

func runSup(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*SimCSESupParams)
	pool := trainPooling(p.Pooling)
	spec := p.Spec(p.Dropout, pool)
	ts, err := registry.ReadTriplets(env, "data", registry.TripletNeeds{Max: p.MaxTriplets, Negative: p.HardNegatives})
	if err != nil {
		return err
	}
	dev, err := LoadDev(env)
	if err != nil {
		return err
	}
	corpus := make([]string, 0, 3*len(ts))
	for _, t := range ts {
		corpus = append(corpus, t.Anchor, t.Positive)
		if t.Negative != "" {
			corpus = append(corpus, t.Negative)
		}
	}
	m, err := BuildModel(env, spec, corpus)
	if err != nil {
		return err
	}
	evalPool := pooled.EvalPooling(pool, p.MLPOnlyTrain)
	anchors, positives, negatives := make([]string, len(ts)), make([]string, len(ts)), make([]string, len(ts))
	for i, t := range ts {
		anchors[i], positives[i], negatives[i] = t.Anchor, t.Positive, t.Negative
	}
	a, pos := m.Tokenize(anchors, p.MaxLength), m.Tokenize(positives, p.MaxLength)
	var neg [][]int
	if p.HardNegatives {
		neg = m.Tokenize(negatives, p.MaxLength)
	}
	temp := float32(p.Temperature)
	step := contrastive.TripletStep(a, pos, neg, temp, func(in [][]int, rng *rand.Rand) (mat.Tensor, error) { return m.Embed(in, pool, rng) })
	m.Pooling = evalPool
	res, err := Fit(ctx, env, m, len(ts), step, dev, p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps))
	if err != nil {
		return err
	}
	return SaveModel(env, m, evalPool, "train.simcse_sup", len(ts), res)
}
