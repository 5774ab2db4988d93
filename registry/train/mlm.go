package train

import (
	"context"
	"fmt"
	"path/filepath"

	"repro/internal/encoder/pooled"
	"repro/internal/mlm"
	"repro/internal/model/transformer"
	"repro/registry"
)

// MLMParams are train.mlm's parameters. The defaults are BERT's
// pretraining recipe (Devlin et al. 2019, section 3.1 and appendix A.2:
// 15% of tokens, 80/10/10, lr 1e-4 with 10,000 warm-up steps and linear
// decay, weight decay 0.01, dropout 0.1, batches of 256 sequences of 128
// tokens, about 40 epochs) on BERT-base's shape and vocabulary; the mini
// profiles set a small shape (experiments/pretrained.hcl).
type MLMParams struct {
	LearningRate    float64 `cty:"learning_rate" doc:"peak learning rate (BERT: 1e-4)"`
	BatchSize       int     `cty:"batch_size" doc:"sentences per batch, grouped by length (BERT: 256 sequences)"`
	MaxLength       int     `cty:"max_length" doc:"token ids per sentence, special tokens included; longer sentences are truncated (BERT: 128 for 90% of its steps)"`
	Epochs          int     `cty:"epochs" doc:"passes over the sentences (max_steps > 0 overrides)"`
	MaxSteps        int     `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	MaskProbability float64 `cty:"mask_probability" doc:"share of the tokens (words, with whole_word) chosen for prediction"`
	MaskToken       float64 `cty:"mask_token" doc:"share of the chosen tokens replaced by the mask token"`
	RandomToken     float64 `cty:"random_token" doc:"share of the chosen tokens replaced by a random token (the rest are left as they are)"`
	WholeWord       bool    `cty:"whole_word" doc:"choose whole words (every piece of a word) instead of single tokens"`
	DevSentences    int     `cty:"dev_sentences" doc:"evaluate on the first N dev sentences (0: all); their masks are drawn with a fixed seed, the same at every evaluation"`
	Pooling         string  `cty:"pooling" doc:"pooling written into encoder.json: how the model embeds sentences when it is evaluated as it is (fine-tuning stages set their own)"`
	GloVeScale      float64 `cty:"glove_scale" doc:"with glove_init: multiply the GloVe vectors by this (GloVe 6B's norms are about 5, BERT-base's word embeddings about 1; the MLM head, and later a PaSeR decoder, use the embeddings as output weights)"`
	NextSentence    bool    `cty:"next_sentence" key:"added" doc:"BERT's next-sentence prediction beside masked-LM: each sentence of data (taken in order, as a text) is paired with the one after it half the time and with a random one otherwise, as [CLS] A [SEP] B [SEP] of at most max_length ids; a classifier on the pooler's output ([CLS] through dense + tanh, created when init has none) learns which, and its loss is added to the MLM loss. The only signal that trains [CLS] and the pooler. The dev evaluation stays masked-LM on single sentences. BERT-shaped encoders only"`
	Optimisation
	Dropout float64 `cty:"dropout" doc:"hidden and attention dropout"`

	Architecture
}

// RegisterMLM adds train.mlm to r.
func RegisterMLM(r *registry.Registry) {
	pooled.Register()
	r.Add(mlmType())
}

func mlmType() *registry.StageType {
	opt := DefaultOptimisation()
	opt.EvalEvery, opt.Warmup, opt.WeightDecay = 1000, 10000, 0.01
	return &registry.StageType{
		Name:    "train.mlm",
		Version: 1,
		Doc: `Masked-language-model pretraining (BERT's recipe, repro/internal/mlm) of a BERT- or
RoBERTa-shaped encoder on single sentences: each time a sentence is seen, a fresh draw
chooses mask_probability of its tokens (or whole words), of which mask_token become the mask
token, random_token a random token, the rest unchanged; the loss is the cross-entropy of the
original tokens at the chosen positions. Sentences are batched with others of similar length.
With dev connected, held-out perplexity and accuracy are measured every eval_every updates and
the best weights kept. The output is a Hugging Face masked-LM checkpoint (BertForMaskedLM or,
with vocab = "bpe", RobertaForMaskedLM) that is also an encoder artifact: connect it to a
training stage's init, as one would load bert-base. With next_sentence, BERT's second
objective is added: pairs [CLS] A [SEP] B [SEP], B the next sentence of data half the time,
classified from the pooler's output (the checkpoint is then a BertForPreTraining). pretraining.json
and loss.png hold the curves; metrics.json the final dev numbers.`,
		Params: MLMParams{
			LearningRate: 1e-4, BatchSize: 256, MaxLength: 128, Epochs: 40,
			MaskProbability: 0.15, MaskToken: 0.8, RandomToken: 0.1, DevSentences: 0, Pooling: string(transformer.PoolMean), GloVeScale: 1,
			Optimisation: opt, Dropout: 0.1, Architecture: DefaultArchitecture(),
		},
		Inputs: []registry.Port{
			{Name: "data", Kind: registry.KindSentences, Doc: "training sentences"},
			{Name: "dev", Kind: registry.KindSentences, Optional: true, Doc: "held-out sentences: perplexity and accuracy every eval_every updates, best weights kept (absent: the last)"},
			{Name: "init", Kind: registry.KindEncoder, Optional: true, Doc: "a transformer encoder to continue pretraining (its MLM head too, when the checkpoint has one)"},
		},
		Outputs: []registry.Port{
			{Name: "model", Kind: registry.KindEncoder, Doc: "the pretrained encoder: checkpoint with MLM head + encoder.json + pretraining.json + loss.png"},
			{Name: "metrics", Kind: registry.KindMetrics, Doc: "metrics.json: dev_perplexity, dev_accuracy (%), dev_loss, train_loss, steps, sentences, tokens; nsp_accuracy (%, the last 200 updates) with next_sentence"},
		},
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*MLMParams).externals(), nil },
		Run:       runMLM,
		Cost:      mlmCost,
	}
}

func runMLM(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*MLMParams)
	sentences, err := registry.ReadSentences(env, "data", 0)
	if err != nil {
		return err
	}
	var devSents []string
	if _, ok := env.Inputs["dev"]; ok {
		if devSents, err = registry.ReadSentences(env, "dev", p.DevSentences); err != nil {
			return err
		}
	}
	pool := trainPooling(p.Pooling)
	pm, m, err := buildMLM(env, p, pool, sentences)
	if err != nil {
		return err
	}
	pre := &mlm.Pretraining{Model: m, Masking: p.masking(), Sentences: pm.Tokenize(sentences, p.MaxLength), Dev: pm.Tokenize(devSents, p.MaxLength),
		BatchSize: p.BatchSize, MaxLength: p.MaxLength, NextSentence: p.NextSentence, Seed: uint64(env.Seed)}
	loop := p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps)
	res, err := pre.Train(ctx, loop.config(env), output(env))
	if err != nil {
		return err
	}
	if err := res.Save(env.Output("model"), m, pool, "train.mlm"); err != nil {
		return err
	}
	return registry.WriteJSON(filepath.Join(env.Output("metrics"), registry.FileMetrics), res.Metrics)
}

// buildMLM returns the encoder to pretrain (BuildModel's) and its
// masked-LM model: the head of init or hf_checkpoint when they have one,
// else a new one; with next_sentence, a next-sentence classifier too.
func buildMLM(env *registry.Env, p *MLMParams, pool transformer.Pooling, sentences []string) (*pooled.Model, *mlm.Model, error) {
	spec := p.Spec(p.Dropout, pool)
	spec.GloVeScale = p.GloVeScale
	pm, err := BuildModel(env, spec, sentences)
	if err != nil {
		return nil, nil, err
	}
	seed := uint64(env.Seed)
	var m *mlm.Model
	var from string
	if a, ok := env.Inputs["init"]; ok {
		from = a.Dir
	} else if spec.HFCheckpoint != "" {
		from = spec.HFCheckpoint
	}
	if from != "" {
		var had bool
		if m, had, err = mlm.FromEncoder(pm, from, seed); err != nil {
			return nil, nil, err
		}
		env.Logger().Info("continuing pretraining", "from", from, "head_restored", had)
	} else if m, err = mlm.New(pm.Encoder, pm.Tokenizer, seed); err != nil {
		return nil, nil, err
	}
	if p.NextSentence && m.NSP == nil {
		if err := m.WithNSP(seed); err != nil {
			return nil, nil, fmt.Errorf("next_sentence: %w", err)
		}
	}
	return pm, m, nil
}

func (p *MLMParams) masking() mlm.Masking {
	return mlm.Masking{Prob: p.MaskProbability, MaskFrac: p.MaskToken, RandomFrac: p.RandomToken, WholeWord: p.WholeWord}
}

// Validate checks every parameter of train.mlm.
func (p *MLMParams) Validate() error {
	var c registry.Checks
	if err := p.masking().Check(); err != nil {
		c.Err(registry.Paramf("mask_probability", "%v (with mask_token and random_token)", err))
	}
	checkEncoderInput(&c, p.MaxLength, p.Dropout)
	c.NonNegative("dev_sentences", p.DevSentences)
	c.Add(p.GloVeScale > 0, "glove_scale", "%v must be positive", p.GloVeScale)
	checkPooling(&c, "pooling", p.Pooling, false)
	if p.NextSentence {
		c.Add(p.MaxLength >= 5, "max_length", "%d leaves no room for a next-sentence pair (3 special tokens and a token of each sentence)", p.MaxLength)
		c.Add(p.Vocab != VocabBPE || p.HFCheckpoint != "", "next_sentence", "needs a BERT-shaped encoder; vocab = %q builds RoBERTa's shape, which has one segment embedding and no next-sentence objective", p.Vocab)
	}
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	p.Architecture.validate(&c)
	return c.Result()
}
