package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/encoder/t5enc"
	"repro/internal/model/checkpoint"
	"repro/internal/model/t5"
	"repro/internal/model/tokenizer"
	"repro/internal/rows"
	"repro/internal/seq2seq"
	"repro/registry"
)

// RegisterT5 adds the text-to-text trainers -- train.seq2seq,
// train.t5_contrastive (and the "t5" encoder type its artifacts are) and
// train.span_corruption when a span-corruption function is wired in
// (SpanCorrupt).
func RegisterT5(r *registry.Registry) {
	t5enc.Register()
	r.Add(seq2seqType())
	r.Add(t5ContrastiveType())
	if SpanCorrupt != nil {
		r.Add(spanCorruptionType())
	}
}

// T5Architecture is where a text-to-text stage's model comes from when no
// init input is connected: a local Hugging Face T5 directory, or a model of
// this shape trained from scratch with a WordPiece vocabulary trained on the
// stage's texts plus T5's sentinel tokens. Defaults: t5-small's shape
// (v1.0: ReLU, tied output), and no training from scratch unless asked.
type T5Architecture struct {
	HFCheckpoint string `cty:"hf_checkpoint" path:"checkpoint" doc:"local Hugging Face T5 directory (config.json, model.safetensors, tokenizer files) to start from; when set the architecture parameters are ignored"`
	FromScratch  bool   `cty:"from_scratch" doc:"without init or hf_checkpoint, train the architecture below from random weights; false makes a missing checkpoint an error"`
	Layers       int    `cty:"layers" doc:"from scratch: encoder blocks and decoder blocks (num_layers)"`
	Hidden       int    `cty:"hidden" doc:"from scratch: width (d_model)"`
	Heads        int    `cty:"heads" doc:"from scratch: attention heads (num_heads)"`
	HeadWidth    int    `cty:"head_width" doc:"from scratch: width of one head (d_kv); 0 = hidden / heads"`
	FF           int    `cty:"ff" doc:"from scratch: feed-forward width (d_ff)"`
	FeedForward  string `cty:"feed_forward_proj" doc:"from scratch: \"relu\" (T5 v1.0) or \"gated-gelu\" (v1.1, Flan-T5)"`
	Tied         bool   `cty:"tie_word_embeddings" doc:"from scratch: output layer tied to the shared embedding (v1.0) rather than a separate lm_head (v1.1)"`
	VocabSize    int    `cty:"vocab_size" doc:"from scratch: WordPiece vocabulary trained on the stage's texts (sentinels not included)"`
	Sentinels    int    `cty:"sentinels" doc:"from scratch: sentinel tokens <extra_id_0>.. appended to the vocabulary (T5: 100)"`
}

var errNoT5 = errors.New("no pretrained model: set hf_checkpoint to a local Hugging Face T5 directory (the experiments take it as -var t5=DIR), connect init, or set from_scratch = true to train the architecture parameters from random weights (the mini profiles do)")

// CheckStart refuses, before a run starts, a stage that has neither init,
// a checkpoint nor leave to train from scratch (registry.StartChecker).
func (a T5Architecture) CheckStart(connected func(string) bool) error {
	return needModel(a.HFCheckpoint, a.FromScratch, connected("init"), errNoT5)
}

func defaultT5Architecture() T5Architecture {
	return T5Architecture{Layers: 6, Hidden: 512, Heads: 8, FF: 2048, FeedForward: "relu", Tied: true, VocabSize: 8000, Sentinels: 100}
}

func (a T5Architecture) validate(c *registry.Checks) {
	if a.HFCheckpoint != "" || !a.FromScratch {
		return
	}
	c.Positive("layers", a.Layers)
	c.Positive("heads", a.Heads)
	c.Add(a.Hidden >= 1 && (a.HeadWidth > 0 || a.Heads >= 1 && a.Hidden%a.Heads == 0), "hidden",
		"%d must be a positive multiple of heads (%d) when head_width is 0", a.Hidden, a.Heads)
	c.NonNegative("head_width", a.HeadWidth)
	c.Positive("ff", a.FF)
	cfg := t5.DefaultConfig()
	cfg.FeedForwardProj = a.FeedForward
	if _, _, err := cfg.FeedForward(); err != nil {
		c.Add(false, "feed_forward_proj", "%v", err)
	}
	c.Add(a.VocabSize >= 100, "vocab_size", "%d is too small for a trained vocabulary (need at least 100)", a.VocabSize)
	c.NonNegative("sentinels", a.Sentinels)
}

func (a T5Architecture) externals() []registry.External {
	if a.HFCheckpoint == "" {
		return nil
	}
	return []registry.External{{Name: "hf_checkpoint", Path: a.HFCheckpoint}}
}

// buildT5 returns the model to train and its tokenizer: init, else
// hf_checkpoint, else from scratch with a vocabulary trained on corpus.
func buildT5(env *registry.Env, a T5Architecture, corpus func() []string) (*t5.Model, tokenizer.Tokenizer, string, error) {
	load := func(what, dir string) (*t5.Model, tokenizer.Tokenizer, string, error) {
		m, tok, err := t5.Load(dir)
		if err != nil {
			return nil, nil, "", fmt.Errorf("%s: %w", what, err)
		}
		if tok == nil {
			return nil, nil, "", fmt.Errorf("%s: %s has no tokenizer files", what, dir)
		}
		return m, tok, what, nil
	}
	if init, ok := env.Inputs["init"]; ok {
		return load("init", init.Dir)
	}
	if a.HFCheckpoint != "" {
		if st, err := os.Stat(a.HFCheckpoint); err != nil || !st.IsDir() {
			return nil, nil, "", fmt.Errorf("hf_checkpoint: %s is not a directory (want a Hugging Face T5 directory with config.json, model.safetensors and the tokenizer)", a.HFCheckpoint)
		}
		return load("hf_checkpoint", a.HFCheckpoint)
	}
	if !a.FromScratch {
		return nil, nil, "", errNoT5
	}
	var tok tokenizer.Tokenizer
	if ta, ok := env.Inputs["tokenizer"]; ok {
		// A tokenizer artifact (a SentencePiece model, say) instead of
		// a WordPiece vocabulary trained here.
		t, err := checkpoint.LoadTokenizer(ta.Dir)
		if err != nil {
			return nil, nil, "", fmt.Errorf("tokenizer: %w", err)
		}
		if t.Special().PAD < 0 || t.Special().SEP < 0 {
			return nil, nil, "", fmt.Errorf("tokenizer: %s has no pad or end-of-sequence token (T5 needs both)", ta.Dir)
		}
		tok = t
	} else {
		wp, err := t5.TrainVocab(corpus(), a.VocabSize, a.Sentinels)
		if err != nil {
			return nil, nil, "", fmt.Errorf("vocab: %w", err)
		}
		tok = wp
	}
	sp := tok.Special()
	c := t5.DefaultConfig()
	c.VocabSize, c.DModel, c.NumHeads, c.DFF, c.NumLayers = tok.Size(), a.Hidden, a.Heads, a.FF, a.Layers
	c.DKV = a.HeadWidth
	if c.DKV == 0 {
		c.DKV = a.Hidden / a.Heads
	}
	c.FeedForwardProj, c.TieWordEmbeddings = a.FeedForward, a.Tied
	c.PadTokenID, c.DecoderStartTokenID, c.EOSTokenID = sp.PAD, sp.PAD, sp.SEP
	m, err := t5.New(c, rand.New(rand.NewPCG(uint64(env.Seed), 0x7435)))
	if err != nil {
		return nil, nil, "", err
	}
	return m, tok, "from_scratch", nil
}

// tokenizerPort is the optional tokenizer of a from-scratch T5 (a
// SentencePiece model from text.unigram_vocab, say); without it a WordPiece
// vocabulary is trained on the stage's texts.
var tokenizerPort = registry.Port{Name: "tokenizer", Kind: registry.KindTokenizer, Optional: true,
	Doc: "from scratch: the tokenizer to use (e.g. a SentencePiece model) instead of a WordPiece vocabulary trained on the data"}

// Overflow policies and model-selection metrics of train.seq2seq
// (internal/seq2seq's).
const (
	OverflowTruncate    = seq2seq.OverflowTruncate
	OverflowFail        = seq2seq.OverflowFail
	SelectPerplexity    = seq2seq.SelectPerplexity
	SelectTokenAccuracy = seq2seq.SelectTokenAccuracy
	SelectAccMinusPPL   = seq2seq.SelectAccMinusPPL
)

// Seq2SeqParams are train.seq2seq's parameters; the defaults are common
// T5 fine-tuning settings (AdamW 1e-4, dropout 0.1).
type Seq2SeqParams struct {
	LearningRate    float64  `cty:"learning_rate" doc:"peak learning rate"`
	BatchSize       int      `cty:"batch_size" doc:"instances per micro-batch"`
	Epochs          int      `cty:"epochs" doc:"passes over the data (max_steps > 0 overrides)"`
	MaxSteps        int      `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	MaxInstances    int      `cty:"max_instances" doc:"train on the first N instances; 0 = all"`
	MaxSourceLength int      `cty:"max_source_length" doc:"source tokens at most (EOS included)"`
	MaxTargetLength int      `cty:"max_target_length" doc:"target tokens at most (EOS included)"`
	Overflow        string   `cty:"overflow" doc:"\"truncate\" (cut longer sources/targets, keep EOS, count them in training.json) or \"fail\" (stop at the first one)"`
	Select          string   `cty:"select" doc:"model selection on dev: \"perplexity\" (lowest target perplexity), \"token_accuracy\" (highest) or \"acc_minus_ppl\" (highest exact-match accuracy in % on the discrimination instances minus ppl_weight x the perplexity of the generation instances; GenSE's)"`
	PPLWeight       float64  `cty:"ppl_weight" doc:"acc_minus_ppl: weight of the generation perplexity (GenSE: 10)"`
	DiscTargets     []string `cty:"discrimination_targets" doc:"acc_minus_ppl: a dev instance whose target is one of these is a discrimination instance (scored by exact match), any other a generation instance (scored by perplexity)"`
	DevBatch        int      `cty:"dev_batch" doc:"instances per batch when scoring dev"`
	Dropout         float64  `cty:"dropout" doc:"dropout_rate during training (T5: 0.1); the saved config keeps the source's"`
	Optimisation    `doc.eval_every:"updates between dev evaluations (when dev is connected)"`
	T5Architecture
}

// Validate checks every parameter of train.seq2seq.
func (p *Seq2SeqParams) Validate() error {
	var c registry.Checks
	p.validateCommon(&c)
	c.OneOf("select", p.Select, SelectPerplexity, SelectTokenAccuracy, SelectAccMinusPPL)
	c.NonNegative("max_instances", p.MaxInstances)
	c.Add(p.PPLWeight >= 0 && !math.IsInf(p.PPLWeight, 0), "ppl_weight", "%v must be a finite value >= 0", p.PPLWeight)
	if p.Select == SelectAccMinusPPL {
		c.Add(len(p.DiscTargets) > 0, "discrimination_targets", "acc_minus_ppl needs the discrimination instances' targets (e.g. [\"true\", \"false\"])")
	}
	for _, t := range p.DiscTargets {
		c.Add(strings.TrimSpace(t) != "", "discrimination_targets", "an empty target cannot name a discrimination instance")
	}
	return c.Result()
}

func (p *Seq2SeqParams) validateCommon(c *registry.Checks) {
	c.Add(p.MaxSourceLength >= 2, "max_source_length", "%d must be at least 2 (a token and EOS)", p.MaxSourceLength)
	c.Add(p.MaxTargetLength >= 1, "max_target_length", "%d must be at least 1", p.MaxTargetLength)
	c.OneOf("overflow", p.Overflow, OverflowTruncate, OverflowFail)
	c.Positive("dev_batch", p.DevBatch)
	c.Add(p.Dropout >= 0 && p.Dropout < 1, "dropout", "%v must lie in [0, 1)", p.Dropout)
	l := p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps)
	l.validate(c)
	p.T5Architecture.validate(c)
}

func defaultSeq2SeqParams() Seq2SeqParams {
	return Seq2SeqParams{LearningRate: 1e-4, BatchSize: 8, Epochs: 3, MaxSourceLength: 128, MaxTargetLength: 64,
		Overflow: OverflowTruncate, Select: SelectPerplexity, PPLWeight: 10, DiscTargets: []string{"true", "false"}, DevBatch: 16, Dropout: 0.1,
		Optimisation: DefaultOptimisation(), T5Architecture: defaultT5Architecture()}
}

func seq2seqType() *registry.StageType {
	return &registry.StageType{
		Name:    "train.seq2seq",
		Version: 2,
		Doc: `Teacher-forced training of a T5 text-to-text model on {source, target} instances: the
decoder reads the pad token then the target shifted right, the loss is the mean token
cross-entropy over the target tokens (padding ignored). Sources and targets end with EOS; longer
ones are cut or fail the stage (overflow). The model is the init input (a T5 language model),
else hf_checkpoint (a local Hugging Face T5), else a from-scratch T5 of the given shape with a
WordPiece vocabulary trained on the instances plus sentinel tokens. With dev connected, the
declared metric is measured every eval_every updates and the best weights are kept: perplexity,
token_accuracy, or acc_minus_ppl (GenSE's "accuracy - 10 x ppl": dev instances whose target is one
of discrimination_targets are discrimination instances, scored by exact match in % -- every target
token the argmax given the gold prefix, i.e. what greedy decoding reproduces; the others are
generation instances, scored by target perplexity; score = accuracy - ppl_weight x perplexity; the
accuracy is in % so that neither term swamps the other). metrics.json holds the best evaluation
(and, for acc_minus_ppl, its two parts); training.json every evaluation. Resumable; bit-identical on
CPU for a given seed.`,
		Params: defaultSeq2SeqParams(),
		Inputs: []registry.Port{
			{Name: "data", Kind: registry.KindSeq2Seq, Doc: "training instances"},
			{Name: "dev", Kind: registry.KindSeq2Seq, Optional: true, Doc: "held-out instances for model selection (absent: keep the last weights)"},
			{Name: "init", Kind: registry.KindLanguageModel, Optional: true, Doc: "a T5 language model to continue training (overrides hf_checkpoint and the architecture)"},
			tokenizerPort,
		},
		Outputs: []registry.Port{
			{Name: "model", Kind: registry.KindLanguageModel, Doc: "the trained model: Hugging Face T5 directory plus training.json"},
			{Name: "metrics", Kind: registry.KindMetrics, Doc: "metrics.json: steps, last_loss, best_step, best_dev; for acc_minus_ppl also dev_generation_perplexity, dev_discrimination_accuracy (%), dev_score, dev_generation_instances, dev_discrimination_instances"},
		},
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*Seq2SeqParams).externals(), nil },
		Run:       runSeq2Seq,
		Cost:      seq2seqCost,
	}
}

// ReadSeq2Seq reads the `name` input's instances (KindSeq2Seq), keeping
// the first max (0: all). An empty source or target is an error naming
// its row.
func ReadSeq2Seq(env *registry.Env, name string, max int) ([]rows.Seq2Seq, error) {
	xs, a, err := registry.ReadRows[rows.Seq2Seq](env, name, registry.FileInstances, max)
	if err != nil {
		return nil, err
	}
	path := a.Path(registry.FileInstances)
	for i, x := range xs {
		switch {
		case strings.TrimSpace(x.Source) == "":
			return nil, fmt.Errorf("%s: %s: row %d: empty source", name, path, i+1)
		case strings.TrimSpace(x.Target) == "":
			return nil, fmt.Errorf("%s: %s: row %d: empty target", name, path, i+1)
		}
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("%s: %s: no instances", name, path)
	}
	return xs, nil
}

// Overflowed, Seq2SeqHistory and DevParts are training.json's parts of
// train.seq2seq (internal/seq2seq's).
type (
	Overflowed     = seq2seq.Overflowed
	Seq2SeqHistory = seq2seq.History
	DevParts       = seq2seq.DevParts
)

func runSeq2Seq(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*Seq2SeqParams)
	xs, err := ReadSeq2Seq(env, "data", p.MaxInstances)
	if err != nil {
		return err
	}
	var dev []rows.Seq2Seq
	if _, ok := env.Inputs["dev"]; ok {
		if dev, err = ReadSeq2Seq(env, "dev", 0); err != nil {
			return err
		}
	}
	m, tok, source, err := buildT5(env, p.T5Architecture, func() []string {
		texts := make([]string, 0, 2*len(xs))
		for _, x := range xs {
			texts = append(texts, x.Source, x.Target)
		}
		return texts
	})
	if err != nil {
		return err
	}
	cfg, err := p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).trainerConfig(env)
	if err != nil {
		return err
	}
	t := &seq2seq.Training{Model: m, Tokenizer: tok, Source: source, Data: xs, Dev: dev, MaxSourceLength: p.MaxSourceLength,
		MaxTargetLength: p.MaxTargetLength, Overflow: p.Overflow, Select: p.Select, PPLWeight: p.PPLWeight, DiscTargets: p.DiscTargets,
		DevBatch: p.DevBatch, Dropout: p.Dropout}
	res, err := t.Train(ctx, cfg, output(env), "train.seq2seq")
	if err != nil {
		return err
	}
	if err := registry.WriteJSON(filepath.Join(env.Output("metrics"), registry.FileMetrics), res.Metrics); err != nil {
		return err
	}
	return res.Save(env.Output("model"), m, tok, "train.seq2seq")
}
