package train

import (
	"context"
	"fmt"

	"repro/internal/contrastive"
	"repro/internal/encoder/t5enc"
	"repro/internal/model/t5"
	"repro/internal/prompt"
	"repro/internal/rows"
	"repro/registry"
)

// T5ContrastiveParams are train.t5_contrastive's parameters; the defaults
// are GenSE's (temperature 0.05, hard negatives, the T_s prompt, the
// decoder's first output).
type T5ContrastiveParams struct {
	Mode          string  `cty:"mode" doc:"\"encdec\" (first decoder output, pad fed to the decoder: GenSE, ST5-EncDec) or \"mean\" (mean of encoder outputs: ST5-Enc)"`
	Template      string  `cty:"template" doc:"prompt around each sentence, [X] its place (GenSE's T_s); \"\" = the sentence alone"`
	MaxLength     int     `cty:"max_length" doc:"encoder tokens per input at most (EOS included); longer inputs are cut and counted"`
	Temperature   float64 `cty:"temperature" doc:"softmax temperature of the contrastive loss"`
	HardNegatives bool    `cty:"hard_negatives" doc:"score anchors against the contradictions too (GenSE eq. 2); false: in-batch negatives only (eq. 3, pairs such as QA)"`
	LearningRate  float64 `cty:"learning_rate" doc:"peak learning rate"`
	BatchSize     int     `cty:"batch_size" doc:"triplets per micro-batch"`
	Epochs        int     `cty:"epochs" doc:"passes over the data (max_steps > 0 overrides)"`
	MaxSteps      int     `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	MaxTriplets   int     `cty:"max_triplets" doc:"train on the first N triplets; 0 = all"`
	Dropout       float64 `cty:"dropout" doc:"dropout_rate during training (T5: 0.1)"`
	// Added after results were cached: the default refuses, as before.
	SmallData string `cty:"small_data" key:"added" doc:"a set of fewer triplets than batch_size: \"refuse\" (an error before training) or \"one_batch\" (every epoch is one batch of all of them, as Hugging Face's loop, which keeps an epoch's last short batch, trains it; the log says so)"`
	Optimisation
	T5Architecture
}

// CheckStart accepts a connected encoder (what a second contrastive stage
// continues from) besides the architecture's init, checkpoint or
// from_scratch.
func (p T5ContrastiveParams) CheckStart(connected func(string) bool) error {
	if connected("encoder") {
		return nil
	}
	return p.T5Architecture.CheckStart(connected)
}

// Validate checks every parameter of train.t5_contrastive.
func (p *T5ContrastiveParams) Validate() error {
	var c registry.Checks
	c.OneOf("mode", p.Mode, t5enc.ModeEncDec, t5enc.ModeMean)
	if p.Template != "" {
		if _, err := prompt.Parse(p.Template, 1); err != nil {
			c.Add(false, "template", "%v", err)
		}
	}
	c.Add(p.MaxLength >= 2, "max_length", "%d must be at least 2 (a token and EOS)", p.MaxLength)
	checkTemperature(&c, p.Temperature)
	c.NonNegative("max_triplets", p.MaxTriplets)
	c.Add(p.Dropout >= 0 && p.Dropout < 1, "dropout", "%v must lie in [0, 1)", p.Dropout)
	if p.SmallData != "" { // "" (a Go caller's zero value) refuses
		c.OneOf("small_data", p.SmallData, "refuse", "one_batch")
	}
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	p.T5Architecture.validate(&c)
	return c.Result()
}

func t5ContrastiveType() *registry.StageType {
	return &registry.StageType{
		Name:    "train.t5_contrastive",
		Version: 1,
		Doc: `Contrastive training of a sentence encoder made from a T5 (GenSE section 2.2; Sentence-T5):
each sentence is put into the template, encoded, and represented by the decoder's first output
with the pad token fed to the decoder (mode "encdec") or by the mean of the encoder outputs
("mean"). The loss is supervised SimCSE's over anchors, positives and, with hard_negatives, the
contradictions (GenSE eq. 2), or in-batch negatives only (eq. 3), at the given temperature. The
model is the encoder input (a T5 encoder to continue), else init (a T5 language model, e.g. from
train.span_corruption or train.seq2seq), else hf_checkpoint, else from scratch. With dev (STS-B
dev) the best weights by Spearman are kept. The artifact is an encoder that every evaluate.*
stage accepts and also a Hugging Face T5 directory.`,
		Params: T5ContrastiveParams{Mode: t5enc.ModeEncDec, Template: "[X] Question: what can we draw from the above sentence?",
			MaxLength: 64, Temperature: 0.05, HardNegatives: true, LearningRate: 5e-5, BatchSize: 64, Epochs: 1, Dropout: 0.1, SmallData: "refuse",
			Optimisation: DefaultOptimisation(), T5Architecture: defaultT5Architecture()},
		Inputs: []registry.Port{
			{Name: "data", Kind: registry.KindTriplets, Doc: "training triplets (anchor, positive, negative); negatives may be empty without hard_negatives"},
			{Name: "dev", Kind: registry.KindSTS, Optional: true, Doc: "STS-B dev pairs for model selection"},
			{Name: "encoder", Kind: registry.KindEncoder, Optional: true, Doc: "a T5 sentence encoder to continue training (its mode and template are replaced by this stage's)"},
			{Name: "init", Kind: registry.KindLanguageModel, Optional: true, Doc: "a T5 language model to start from"},
			tokenizerPort,
		},
		Outputs:   []registry.Port{{Name: "model", Kind: registry.KindEncoder, Doc: "the sentence encoder (type t5): a Hugging Face T5 directory plus encoder.json and training.json"}},
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*T5ContrastiveParams).externals(), nil },
		Run:       runT5Contrastive,
		Cost:      t5ContrastiveCost,
	}
}

func runT5Contrastive(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*T5ContrastiveParams)
	ts, err := registry.ReadTriplets(env, "data", registry.TripletNeeds{Max: p.MaxTriplets, Negative: p.HardNegatives})
	if err != nil {
		return err
	}
	dev, err := LoadDev(env)
	if err != nil {
		return err
	}
	enc, source, err := buildT5Encoder(env, p, ts)
	if err != nil {
		return err
	}
	cfg, err := p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).trainerConfig(env)
	if err != nil {
		return err
	}
	if p.SmallData == "one_batch" && len(ts) < cfg.BatchSize {
		if len(ts) < 2 {
			return fmt.Errorf("data: %d triplet(s): a batch needs at least 2 (in-batch negatives), even with small_data = \"one_batch\"", len(ts))
		}
		env.Logger().Info("small_data one_batch: fewer triplets than batch_size, every epoch is one batch of all of them",
			"triplets", len(ts), "batch_size", cfg.BatchSize)
		cfg.BatchSize = len(ts)
	}
	r := &contrastive.T5{Encoder: enc, Triplets: ts, HardNegatives: p.HardNegatives, Temperature: p.Temperature, Dropout: p.Dropout,
		Dev: dev, Source: source}
	res, err := r.Train(ctx, cfg, output(env), "train.t5_contrastive")
	if err != nil {
		return err
	}
	return res.Save(env.Output("model"), enc)
}

// buildT5Encoder returns the sentence encoder to train: the encoder input
// (its mode and template replaced by p's), else buildT5's model.
func buildT5Encoder(env *registry.Env, p *T5ContrastiveParams, ts []rows.Triplet) (*t5enc.Model, string, error) {
	if a, ok := env.Inputs["encoder"]; ok {
		m, tok, err := t5.Load(a.Dir)
		if err != nil {
			return nil, "", fmt.Errorf("encoder: %w (a T5 sentence encoder is a T5 directory)", err)
		}
		if tok == nil {
			return nil, "", fmt.Errorf("encoder: %s has no tokenizer files", a.Dir)
		}
		enc, err := t5enc.New(m, tok, p.Mode, p.Template, p.MaxLength)
		return enc, "encoder", err
	}
	m, tok, source, err := buildT5(env, p.T5Architecture, func() []string {
		var c []string
		for _, t := range ts {
			c = append(c, t.Anchor, t.Positive, t.Negative)
		}
		return c
	})
	if err != nil {
		return nil, "", err
	}
	enc, err := t5enc.New(m, tok, p.Mode, p.Template, p.MaxLength)
	return enc, source, err
}
