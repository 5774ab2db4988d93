package train

// PaSeR's stage types (Wu and Zhao; the objective itself is in
// repro/internal/paser):
//
//	train.paser      masked pairs -> encoder   (eq. 4: L_MLM + L_generative)
//	train.paser_sup  NLI triplets + masked pairs + unsupervised encoder -> encoder
//	                 (eq. 5: L_contrastive + alpha * L_generative)
//
// Both build the sentence encoder with the shared helpers (BuildModel,
// LoadDev, LoopSpec) and train it together with PaSeR's decoder and MLM
// head; only the encoder is saved, as the paper discards the decoder. The
// model is saved with the training pooling by default: for "cls" that is
// [CLS] through the pooler, the vector the decoder was trained to read
// (eval_pooling overrides it).
//
// train.paser_sup's decoder starts fresh: the unsupervised stage's
// decoder is not part of its output artifact. Its two datasets are walked
// together: update i's examples are triplets k mod len(triplets) and masked
// pairs k mod len(masked) for the batch indices k of an epoch over the
// larger of the two, so both are used whole and the run stays seeded and
// resumable through the shared trainer.

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/encoder/pooled"
	"repro/internal/model/transformer"
	"repro/internal/paser"
	"repro/internal/text/mask"
	"repro/internal/trainer"
	"repro/registry"
)

// PaSeRParams are train.paser's parameters. Defaults are the paper's
// unsupervised BERT-base setting (section 4.2, Tables 8-9, Figure 4): lr
// 3e-5, batch 64, max length 32, a 6-layer decoder, m = n = 10, [CLS]
// pooling, MLM at 15%, 5 epochs over the STS sentences; the SimCSE stages'
// optimisation and architecture parameters otherwise.
type PaSeRParams struct {
	DecoderLayers   int     `cty:"decoder_layers" doc:"generative decoder layers (paper: 6; Figure 4 varies 1-8)"`
	M               float64 `cty:"m" doc:"scale of |Es - Es'| in the decoding signal (paper: 10)"`
	N               float64 `cty:"n" doc:"scale of |Es * Es'| in the decoding signal (paper: 10)"`
	Memory          string  `cty:"memory" doc:"how the signal feeds the decoder: slots (4 memory rows of width hidden) or project (one row, Linear(4*hidden, hidden))"`
	MLM             bool    `cty:"mlm" doc:"add BERT's masked-language-model loss on s (eq. 4)"`
	MLMProbability  float64 `cty:"mlm_probability" doc:"MLM masking rate (80% [MASK], 10% random, 10% kept)"`
	MaxTargetLength int     `cty:"max_target_length" doc:"decoder ids per example: BOS, the phrases each ended by SEP"`
	EvalPooling     string  `cty:"eval_pooling" doc:"pooling of the saved encoder; empty = the training pooling"`

	LearningRate float64 `cty:"learning_rate" doc:"peak learning rate (paper: 3e-5)"`
	BatchSize    int     `cty:"batch_size" doc:"masked pairs per batch (paper: 32, 64 or 96)"`
	MaxLength    int     `cty:"max_length" doc:"token ids per encoder input, [CLS] and [SEP] included (paper: 32)"`
	Epochs       int     `cty:"epochs" doc:"passes over the data (max_steps > 0 overrides)"`
	MaxSteps     int     `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	MaxPairs     int     `cty:"max_pairs" doc:"train on the first N masked pairs; 0 = all"`
	Optimisation
	Dropout float64 `cty:"dropout" doc:"hidden and attention dropout of encoder and decoder"`
	Pooling string  `cty:"pooling" doc:"cls | cls_before_pooler | mean (Top1 avg) | first_last_avg | top2_avg (paper Table 9)"`

	Architecture `doc.heads:"from scratch: attention heads (the decoder's too)" doc.intermediate:"from scratch: feed-forward size (the decoder's too)"`
}

// PaSeRSupParams are train.paser_sup's parameters (section 3.3; SimCSE's
// supervised settings where the paper gives none, batch 64 as in its
// unsupervised runs).
type PaSeRSupParams struct {
	Alpha           float64 `cty:"alpha" doc:"weight of the generative loss (eq. 5; the paper searches it)"`
	Temperature     float64 `cty:"temperature" doc:"softmax temperature of the contrastive loss"`
	HardNegatives   bool    `cty:"hard_negatives" doc:"score anchors against the contradictions too"`
	DecoderLayers   int     `cty:"decoder_layers" doc:"generative decoder layers (fresh decoder)"`
	M               float64 `cty:"m" doc:"scale of |Es - Es'| in the decoding signal"`
	N               float64 `cty:"n" doc:"scale of |Es * Es'| in the decoding signal"`
	Memory          string  `cty:"memory" doc:"slots or project (see train.paser)"`
	MaxTargetLength int     `cty:"max_target_length" doc:"decoder ids per example"`
	EvalPooling     string  `cty:"eval_pooling" doc:"pooling of the saved encoder; empty = the training pooling"`

	LearningRate float64 `cty:"learning_rate" doc:"peak learning rate (SimCSE supervised: 5e-5)"`
	BatchSize    int     `cty:"batch_size" doc:"triplets (and masked pairs) per batch"`
	MaxLength    int     `cty:"max_length" doc:"token ids per encoder input, [CLS] and [SEP] included"`
	Epochs       int     `cty:"epochs" doc:"passes over the larger of the two datasets (max_steps > 0 overrides)"`
	MaxSteps     int     `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	MaxTriplets  int     `cty:"max_triplets" doc:"train on the first N triplets; 0 = all"`
	Optimisation
	Dropout float64 `cty:"dropout" doc:"hidden and attention dropout of encoder and decoder"`
	Pooling string  `cty:"pooling" doc:"cls | cls_before_pooler | mean | first_last_avg | top2_avg"`
}

// RegisterPaSeR adds train.paser and train.paser_sup to r (and the
// "transformer" encoder type with package encoder, as Register does).
func RegisterPaSeR(r *registry.Registry) {
	pooled.Register()
	r.Add(paserType())
	r.Add(paserSupType())
}

func paserType() *registry.StageType {
	return &registry.StageType{
		Name:    "train.paser",
		Version: 1,
		Doc: `Unsupervised PaSeR: encode s and its masked duplicate s' with the shared encoder; a
Transformer decoder sharing the word embeddings reads the signal [Es, Es', m|Es-Es'|, n|Es*Es'|]
and reconstructs the masked phrases (BOS p0 SEP p1 SEP ..., teacher forcing); plus MLM on s.
Saves the encoder only.`,
		Params: PaSeRParams{
			DecoderLayers: 6, M: 10, N: 10, Memory: string(paser.MemorySlots), MLM: true, MLMProbability: 0.15, MaxTargetLength: 32,
			LearningRate: 3e-5, BatchSize: 64, MaxLength: 32, Epochs: 5,
			Optimisation: DefaultOptimisation(), Dropout: 0.1, Pooling: string(transformer.PoolCLS),
			Architecture: DefaultArchitecture(),
		},
		Inputs: []registry.Port{
			{Name: "data", Kind: registry.KindMaskedPairs, Doc: "masked pairs {sentence, masked, targets} (text.mask_phrases, optionally text.eda)"},
			{Name: "dev", Kind: registry.KindSTS, Optional: true, Doc: "STS-B dev pairs: evaluate every eval_every updates and keep the best weights (absent: keep the last)"},
			{Name: "init", Kind: registry.KindEncoder, Optional: true, Doc: "a transformer encoder to continue training (overrides hf_checkpoint and the architecture)"},
		},
		Outputs:   modelOutput,
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*PaSeRParams).externals(), nil },
		Run:       runPaSeR,
		Cost:      paserCost,
	}
}

func paserSupType() *registry.StageType {
	return &registry.StageType{
		Name:    "train.paser_sup",
		Version: 1,
		Doc: `Supervised PaSeR: supervised SimCSE on NLI triplets (hard negatives) plus alpha times
PaSeR's phrase-reconstruction loss on masked pairs of NLI sentences, starting from the best
unsupervised PaSeR encoder (init) with a fresh decoder.`,
		Params: PaSeRSupParams{
			Alpha: 1, Temperature: 0.05, HardNegatives: true, DecoderLayers: 6, M: 10, N: 10, Memory: string(paser.MemorySlots),
			MaxTargetLength: 32, LearningRate: 5e-5, BatchSize: 64, MaxLength: 32, Epochs: 3,
			Optimisation: DefaultOptimisation(), Dropout: 0.1, Pooling: string(transformer.PoolCLS),
		},
		Inputs: []registry.Port{
			{Name: "triplets", Kind: registry.KindTriplets, Doc: "NLI triplets: anchor, positive (entailment), negative (contradiction)"},
			{Name: "masked", Kind: registry.KindMaskedPairs, Doc: "masked pairs of NLI sentences"},
			{Name: "init", Kind: registry.KindEncoder, Doc: "the unsupervised PaSeR encoder (its best checkpoint)"},
			{Name: "dev", Kind: registry.KindSTS, Optional: true, Doc: "STS-B dev pairs for model selection"},
		},
		Outputs: modelOutput,
		Seeded:  true,
		Tensor:  true,
		Run:     runPaSeRSup,
		Cost:    paserSupCost,
	}
}

// objective is the PaSeR configuration of validated parameters shared by
// both types, and the pooling of the saved encoder.
func objective(decoderLayers int, m, n float64, memory string, maxTarget int, pooling, evalPooling string) (paser.Config, transformer.Pooling) {
	c := paser.DefaultConfig()
	c.DecoderLayers, c.M, c.N, c.Memory, c.MaxTargetLength = decoderLayers, float32(m), float32(n), paser.Memory(memory), maxTarget
	c.Pooling = transformer.Pooling(pooling)
	evalPool := c.Pooling
	if evalPooling != "" {
		evalPool = transformer.Pooling(evalPooling)
	}
	return c, evalPool
}

// readMasked reads a masked-pairs input, keeping the first max (0: all).
func readMasked(env *registry.Env, name string, max int) ([]mask.MaskedPair, string, error) {
	ps, a, err := registry.ReadRows[mask.MaskedPair](env, name, registry.FilePairs, max)
	if err != nil {
		return nil, "", err
	}
	path := a.Path(registry.FilePairs)
	if len(ps) == 0 {
		return nil, "", fmt.Errorf("%s: %s: no masked pairs", name, path)
	}
	return ps, path, nil
}

func runPaSeR(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*PaSeRParams)
	cfg, evalPool := objective(p.DecoderLayers, p.M, p.N, p.Memory, p.MaxTargetLength, p.Pooling, p.EvalPooling)
	cfg.MLM, cfg.MLMProb, cfg.MaxLength = p.MLM, p.MLMProbability, p.MaxLength
	spec := p.Spec(p.Dropout, cfg.Pooling)
	pairs, path, err := readMasked(env, "data", p.MaxPairs)
	if err != nil {
		return err
	}
	dev, err := LoadDev(env)
	if err != nil {
		return err
	}
	corpus := make([]string, len(pairs))
	for i, pr := range pairs {
		corpus[i] = pr.Sentence
	}
	sm, err := BuildModel(env, spec, corpus)
	if err != nil {
		return err
	}
	pm, err := newPaSeR(sm, cfg, env.Seed)
	if err != nil {
		return err
	}
	exs, err := prepareMasked(env, pm, pairs, "data", path)
	if err != nil {
		return err
	}
	step := func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		b := make([]paser.Example, len(batch))
		for i, k := range batch {
			b[i] = exs[k]
		}
		l, err := pm.UnsupLoss(b, rng)
		return l.Total, err
	}
	sm.Pooling = evalPool
	res, err := FitParams(ctx, env, trainer.FromNamed(pm.NamedParams()), sm, len(exs), step, dev, p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps))
	if err != nil {
		return err
	}
	return SaveModel(env, sm, evalPool, "train.paser", len(exs), res)
}

func runPaSeRSup(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*PaSeRSupParams)
	cfg, evalPool := objective(p.DecoderLayers, p.M, p.N, p.Memory, p.MaxTargetLength, p.Pooling, p.EvalPooling)
	cfg.MLM, cfg.MaxLength = false, p.MaxLength
	if _, ok := env.Inputs["init"]; !ok {
		return fmt.Errorf("init: not connected (supervised PaSeR starts from the unsupervised PaSeR encoder)")
	}
	ts, err := registry.ReadTriplets(env, "triplets", registry.TripletNeeds{Max: p.MaxTriplets, Negative: p.HardNegatives})
	if err != nil {
		return err
	}
	pairs, path, err := readMasked(env, "masked", 0)
	if err != nil {
		return err
	}
	dev, err := LoadDev(env)
	if err != nil {
		return err
	}
	sm, err := BuildModel(env, ModelSpec{Dropout: p.Dropout, Pooling: cfg.Pooling}, nil)
	if err != nil {
		return err
	}
	pm, err := newPaSeR(sm, cfg, env.Seed)
	if err != nil {
		return err
	}
	exs, err := prepareMasked(env, pm, pairs, "masked", path)
	if err != nil {
		return err
	}
	anchors, positives, negatives := make([]string, len(ts)), make([]string, len(ts)), make([]string, len(ts))
	for i, t := range ts {
		anchors[i], positives[i] = t.Anchor, t.Positive
		if p.HardNegatives {
			negatives[i] = t.Negative
		}
	}
	trips, err := pm.PrepareTriplets(anchors, positives, negatives)
	if err != nil {
		return fmt.Errorf("triplets: %w", err)
	}
	n := max(len(trips), len(exs))
	alpha, temp := float32(p.Alpha), float32(p.Temperature)
	step := func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		tb := make([]paser.Triplet, len(batch))
		mb := make([]paser.Example, len(batch))
		for i, k := range batch {
			tb[i], mb[i] = trips[k%len(trips)], exs[k%len(exs)]
		}
		l, err := pm.SupLoss(tb, mb, alpha, temp, rng)
		return l.Total, err
	}
	sm.Pooling = evalPool
	res, err := FitParams(ctx, env, trainer.FromNamed(pm.NamedParams()), sm, n, step, dev, p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps))
	if err != nil {
		return err
	}
	return SaveModel(env, sm, evalPool, "train.paser_sup", n, res)
}

// newPaSeR puts PaSeR's decoder (and MLM head) on the sentence encoder,
// checking the lengths against the encoder's positions.
func newPaSeR(sm *pooled.Model, cfg paser.Config, seed int64) (*paser.Model, error) {
	lim := sm.Encoder.Config.MaxLen()
	if cfg.MaxLength > lim {
		return nil, fmt.Errorf("max_length: %d exceeds the encoder's %d positions", cfg.MaxLength, lim)
	}
	if cfg.MaxTargetLength > lim {
		return nil, fmt.Errorf("max_target_length: %d exceeds the decoder's %d positions (the encoder's)", cfg.MaxTargetLength, lim)
	}
	pm, err := paser.New(sm.Encoder, sm.Tokenizer, cfg, uint64(seed))
	if err != nil {
		return nil, err
	}
	return pm, nil
}

// prepareMasked tokenises the masked pairs read from input port (file
// path), and notes in the stage's log how many masked phrases the tokenizer
// kept nothing of (they are left out of the reconstruction targets).
func prepareMasked(env *registry.Env, pm *paser.Model, pairs []mask.MaskedPair, port, path string) ([]paser.Example, error) {
	exs, err := pm.Prepare(pairs)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", port, path, err)
	}
	n := 0
	for _, ex := range exs {
		n += ex.Dropped
	}
	if n > 0 && env.Log != nil {
		env.Log.Info("masked phrases without tokens left out of the targets", "file", path, "phrases", n)
	}
	return exs, nil
}
