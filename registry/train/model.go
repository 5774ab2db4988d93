package train

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"repro/internal/contrastive"
	"repro/internal/encoder"
	"repro/internal/encoder/pooled"
	"repro/internal/model/transformer"
	"repro/internal/rows"
	"repro/internal/tensor/backend"
	"repro/internal/trainer"
	"repro/registry"
)

// Vocabulary sources of a from-scratch model.
const (
	VocabBERT  = "bert-base-uncased" // the catalogue's vocab.txt
	VocabTrain = "train"             // a WordPiece vocabulary trained on the training sentences
	// VocabBPE is a byte-level BPE vocabulary trained on the training
	// sentences, with RoBERTa's special tokens and shape (positions offset
	// by the padding id, one segment type, layer-norm epsilon 1e-5).
	VocabBPE = "bpe"
)

// Architecture is the parameter group, embedded in the Params of the
// training types that can build their own model, that says where the model
// comes from when no init input is connected: a Hugging Face checkpoint, or
// a from-scratch model of this shape. Its defaults (DefaultArchitecture)
// are BERT-base's shape.
type Architecture struct {
	HFCheckpoint string `cty:"hf_checkpoint" path:"checkpoint" doc:"local Hugging Face BERT/RoBERTa directory to start from; when set the architecture parameters are ignored"`
	FromScratch  bool   `cty:"from_scratch" doc:"without init or hf_checkpoint, train the architecture below from random weights; false makes a missing checkpoint an error (the paper settings need pretrained weights)"`
	Layers       int    `cty:"layers" doc:"from scratch: transformer layers"`
	Hidden       int    `cty:"hidden" doc:"from scratch: hidden size (>= 100 with glove_init)"`
	Heads        int    `cty:"heads" doc:"from scratch: attention heads"`
	Intermediate int    `cty:"intermediate" doc:"from scratch: feed-forward size"`
	MaxPosition  int    `cty:"max_position" doc:"from scratch: position embeddings (longest sentence encoded)"`
	Vocab        string `cty:"vocab" doc:"from scratch: \"bert-base-uncased\" (the catalogue's vocab.txt), \"train\" (WordPiece trained on the data) or \"bpe\" (byte-level BPE trained on the data: a RoBERTa-shaped model)"`
	VocabSize    int    `cty:"vocab_size" doc:"from scratch with vocab = \"train\" or \"bpe\": vocabulary size"`
	GloVeInit    bool   `cty:"glove_init" doc:"from scratch: initialise whole-word embeddings from GloVe (leading columns)"`
	GloVe        string `cty:"glove" doc:"word-vector dataset used by glove_init"`
}

// externals names the checkpoint directory a stage reads, if any: its
// content (weights, config, tokenizer) is in the stage's key, not its path.
func (a Architecture) externals() []registry.External {
	if a.HFCheckpoint == "" {
		return nil
	}
	return []registry.External{{Name: "hf_checkpoint", Path: a.HFCheckpoint}}
}

var errNoBERT = errors.New("no pretrained model: set hf_checkpoint to a local Hugging Face BERT/RoBERTa directory (the experiments take it as -var bert=DIR / -var roberta=DIR), connect init, or set from_scratch = true to train the architecture parameters from random weights (the mini profiles do)")

// CheckStart refuses, before a run starts, a stage that has neither init,
// a checkpoint nor leave to train from scratch (registry.StartChecker).
func (a Architecture) CheckStart(connected func(string) bool) error {
	return needModel(a.HFCheckpoint, a.FromScratch, connected("init"), errNoBERT)
}

// needModel is the start check the architecture groups share: a model must
// come from init, hf_checkpoint or from_scratch.
func needModel(hf string, fromScratch, init bool, missing error) error {
	if init || hf != "" || fromScratch {
		return nil
	}
	return missing
}

// DefaultArchitecture is BERT-base's shape with its vocabulary, trained
// from scratch when no checkpoint is given, GloVe initialisation off.
func DefaultArchitecture() Architecture {
	return Architecture{
		FromScratch: true, Layers: 12, Hidden: 768, Heads: 12, Intermediate: 3072, MaxPosition: 512,
		Vocab: VocabBERT, VocabSize: 8000, GloVe: "glove.6B.100d",
	}
}

// Spec returns the ModelSpec of a (validated) with the given dropout and
// training pooling.
func (a Architecture) Spec(dropout float64, pooling transformer.Pooling) ModelSpec {
	glove := ""
	if a.GloVeInit {
		glove = a.GloVe
	}
	return ModelSpec{HFCheckpoint: a.HFCheckpoint, FromScratch: a.FromScratch, Layers: a.Layers, Hidden: a.Hidden, Heads: a.Heads,
		Intermediate: a.Intermediate, MaxPosition: a.MaxPosition, Vocab: a.Vocab, VocabSize: a.VocabSize, GloVe: glove,
		Dropout: dropout, Pooling: pooling}
}

// ModelSpec says where a stage's model comes from (see the package doc)
// and its dropout and training pooling. Stage types fill it from their own
// parameters.
type ModelSpec struct {
	// HFCheckpoint is a local Hugging Face BERT/RoBERTa directory; when
	// set, the architecture fields are ignored.
	HFCheckpoint string
	// Architecture of a from-scratch model.
	Layers, Hidden, Heads, Intermediate, MaxPosition int
	// Vocab is VocabBERT or VocabTrain; VocabSize applies to VocabTrain.
	Vocab     string
	VocabSize int
	// GloVe names a word-vector dataset to initialise the word embeddings
	// of whole-word pieces from ("" = none); GloVeScale multiplies its
	// vectors (0 = 1).
	GloVe      string
	GloVeScale float64
	// FromScratch allows a randomly initialised model when neither init nor
	// HFCheckpoint is given; without it that is an error, so a paper
	// setting never silently trains BERT-base from scratch.
	FromScratch bool
	// Dropout sets the hidden and attention dropout of the model, whatever
	// its source.
	Dropout float64
	// Pooling is the training pooling; "cls" makes sure the model has an
	// MLP head (pooler).
	Pooling transformer.Pooling
}

// BuildModel returns the model to train: the `init` input when connected,
// else spec.HFCheckpoint, else a from-scratch model whose trained
// vocabulary (if any) is learned from corpus. Errors name the parameter or
// input at fault.
func BuildModel(env *registry.Env, spec ModelSpec, corpus []string) (*pooled.Model, error) {
	seed := uint64(env.Seed)
	if !(spec.Dropout >= 0 && spec.Dropout < 1) {
		return nil, fmt.Errorf("dropout: %v must lie in [0, 1)", spec.Dropout)
	}
	var m *pooled.Model
	fresh := false // whether a "cls" head must be created
	switch init, ok := env.Inputs["init"]; {
	case ok:
		var err error
		if m, err = pooled.Load(init.Dir); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		fresh = m.Encoder.Pooler == nil
	case spec.HFCheckpoint != "":
		st, err := os.Stat(spec.HFCheckpoint)
		if err != nil {
			return nil, fmt.Errorf("hf_checkpoint: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("hf_checkpoint: %s is not a directory (want a Hugging Face model directory with config.json, model.safetensors and tokenizer files)", spec.HFCheckpoint)
		}
		if m, err = pooled.FromHF(spec.HFCheckpoint, transformer.PoolCLSBeforePooler); err != nil {
			return nil, fmt.Errorf("hf_checkpoint: %w", err)
		}
		fresh = true
	case !spec.FromScratch:
		return nil, errNoBERT
	default:
		var err error
		if m, err = scratchModel(spec, corpus, seed); err != nil {
			return nil, err
		}
	}
	if spec.Pooling == transformer.PoolCLS && fresh {
		m.ResetPooler(seed)
	}
	m.Encoder.Config.HiddenDropout = float32(spec.Dropout)
	m.Encoder.Config.AttentionDropout = float32(spec.Dropout)
	m.Pooling = spec.Pooling
	return m, nil
}

func scratchModel(spec ModelSpec, corpus []string, seed uint64) (*pooled.Model, error) {
	var c registry.Checks
	checkShape(&c, spec.Layers, spec.Hidden, spec.Heads, spec.Intermediate, spec.MaxPosition)
	if err := c.Result(); err != nil {
		return nil, err
	}
	var m *pooled.Model
	cfg := transformer.Config{Hidden: spec.Hidden, Layers: spec.Layers, Heads: spec.Heads, Intermediate: spec.Intermediate,
		MaxPosition: spec.MaxPosition, TypeVocab: 2, LayerNormEps: 1e-12}
	switch spec.Vocab {
	case VocabBERT:
		path, err := catalogue().Path("bert-base-uncased", "vocab")
		if err != nil {
			return nil, fmt.Errorf("vocab: %w", err)
		}
		tok, err := pooled.LoadVocab(path)
		if err != nil {
			return nil, fmt.Errorf("vocab: %w", err)
		}
		if m, err = pooled.New(cfg, tok, spec.Pooling, seed); err != nil {
			return nil, err
		}
	case VocabTrain:
		tok, err := pooled.TrainVocab(corpus, spec.VocabSize)
		if err != nil {
			return nil, fmt.Errorf("vocab: %w", err)
		}
		if m, err = pooled.New(cfg, tok, spec.Pooling, seed); err != nil {
			return nil, err
		}
	case VocabBPE:
		tok, err := pooled.TrainBPEVocab(corpus, spec.VocabSize)
		if err != nil {
			return nil, fmt.Errorf("vocab: %w", err)
		}
		// RoBERTa numbers positions from padding_idx + 1.
		cfg.PositionOffset = tok.Special().PAD + 1
		cfg.MaxPosition += cfg.PositionOffset
		cfg.TypeVocab = 1
		cfg.LayerNormEps = 1e-5
		if m, err = pooled.New(cfg, tok, spec.Pooling, seed); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("vocab: %q is not a vocabulary source (want %q, %q or %q)", spec.Vocab, VocabBERT, VocabTrain, VocabBPE)
	}
	if spec.GloVe != "" {
		v, err := catalogue().GloVe(spec.GloVe)
		if err != nil {
			return nil, fmt.Errorf("glove: %w", err)
		}
		if v.Dim > spec.Hidden {
			return nil, fmt.Errorf("glove_init: %s has %d dimensions, more than hidden %d (GloVe fills the leading columns; use hidden >= %d)", spec.GloVe, v.Dim, spec.Hidden, v.Dim)
		}
		scale := spec.GloVeScale
		if scale == 0 {
			scale = 1
		}
		if _, err := m.InitGloVeScaled(v, float32(scale)); err != nil {
			return nil, fmt.Errorf("glove_init: %w", err)
		}
	}
	return m, nil
}

// LoadDev reads the optional `dev` input (KindSTS pairs, STS-B dev) for
// model selection; it returns nil when the input is not connected.
func LoadDev(env *registry.Env) (*pooled.DevSet, error) {
	a, ok := env.Inputs["dev"]
	if !ok {
		return nil, nil
	}
	path := a.Path(registry.FilePairs)
	ps, err := rows.Read[rows.STSPair](path)
	if err != nil {
		return nil, fmt.Errorf("dev: %w", err)
	}
	d, err := pooled.NewDevSet(ps)
	if err != nil {
		return nil, fmt.Errorf("dev: %s: %w", path, err)
	}
	return d, nil
}

// Optimisation is the parameter group of the trainer's settings that every
// training type declares alike (embedded in their Params; the learning
// rate, batch size, epochs and step limit stay with each type, whose docs
// and defaults differ). Its defaults (DefaultOptimisation): evaluation
// every 250 updates (SimCSE's), no early stopping, warm-up or weight
// decay, gradient norm clipped at 1, no accumulation, FP32.
//
// Precision (mixed precision, backend.Precision) is a stage parameter, not
// a backend family: a profile chooses it per training stage (T5-base in
// bf16, its evaluations in fp32), and the key carries it once it is set.
// It came after results were cached (key:"added"): at its default, fp32,
// it is left out of the key, so no key of any backend (cpu, openblas,
// cuda, emu) changes; tf32 or bf16 enters the key and is refused on a
// backend without a device (cpu, openblas).
type Optimisation struct {
	EvalEvery    int     `cty:"eval_every" doc:"updates between STS-B dev evaluations (when dev is connected); 0 = at the end of each epoch"`
	Patience     int     `cty:"patience" doc:"stop after this many evaluations without improvement; 0 = never"`
	Warmup       int     `cty:"warmup" doc:"updates of linear learning-rate warm-up (then linear decay to 0)"`
	WeightDecay  float64 `cty:"weight_decay" doc:"AdamW decoupled weight decay (not on biases and LayerNorm)"`
	GradClip     float64 `cty:"grad_clip" doc:"clip the global gradient norm to this; 0 = no clipping"`
	Accumulation int     `cty:"accumulation" doc:"micro-batches per optimizer update"`
	Precision    string  `cty:"precision" key:"added" doc:"the GEMMs' arithmetic on a device backend (--backend emu or cuda): fp32 (the reference), tf32 (operands rounded to TensorFloat-32), or bf16 (operands rounded to bfloat16, FP32 sums, FP32 master weights and AdamW); emu emulates both. Anything but fp32 needs a device backend and enters the stage key"`
}

// DefaultOptimisation returns the defaults described at Optimisation.
func DefaultOptimisation() Optimisation {
	return Optimisation{EvalEvery: 250, GradClip: 1, Accumulation: 1, Precision: "fp32"}
}

// Loop is the LoopSpec of o with a type's own learning rate, batch size,
// epochs and step limit.
func (o Optimisation) Loop(learningRate float64, batchSize, epochs, maxSteps int) LoopSpec {
	return LoopSpec{LearningRate: learningRate, BatchSize: batchSize, Epochs: epochs, MaxSteps: maxSteps,
		Warmup: o.Warmup, WeightDecay: o.WeightDecay, GradClip: o.GradClip, Accumulation: o.Accumulation,
		EvalEvery: o.EvalEvery, Patience: o.Patience, Precision: o.Precision}
}

// LoopSpec are the optimisation settings every training type shares.
type LoopSpec struct {
	LearningRate float64
	BatchSize    int
	Epochs       int
	MaxSteps     int // 0: epochs decide
	Warmup       int // updates of linear warm-up
	// WarmupRatio, when Warmup is 0, is the warm-up as a share of the
	// run's updates, rounded up (sentence-transformers' ceil(10% of the
	// updates)): the trainer counts them from the data, so it follows the
	// data the run actually has.
	WarmupRatio  float64
	WeightDecay  float64
	GradClip     float64 // max global gradient norm (0: none)
	Accumulation int
	EvalEvery    int
	Patience     int    // evaluations without improvement before stopping (0: never)
	Precision    string // the GEMMs' arithmetic (backend.ParsePrecision; "" is fp32)
}

// checkpointInterval paces the timed state snapshots of every training
// type (trainer.Config.CheckpointInterval).
const checkpointInterval = time.Minute

// config is the trainer's configuration for l in env (its work directory
// and seed).
func (l LoopSpec) config(env *registry.Env) trainer.Config {
	return trainer.Config{
		Epochs: l.Epochs, MaxSteps: l.MaxSteps, BatchSize: l.BatchSize, Accumulate: l.Accumulation,
		// The epoch's last, short batch is kept (HF's loop does too).
		LR: l.LearningRate, Warmup: l.Warmup, WarmupRatio: l.WarmupRatio, WeightDecay: l.WeightDecay, MaxGradNorm: l.GradClip,
		EvalEvery: l.EvalEvery, Patience: l.Patience,
		Work: env.Work, Seed: uint64(env.Seed),
		// A run killed outright (a time limit, a crash) resumes from a
		// snapshot at most about this old, besides those at evaluations
		// and epoch ends; snapshots change no output.
		CheckpointInterval: checkpointInterval,
		Precision:          precision(l.Precision),
	}
}

// precision is backend.ParsePrecision of a validated name.
func precision(s string) backend.Precision {
	p, _ := backend.ParsePrecision(s)
	return p
}

func (l LoopSpec) check() error {
	var c registry.Checks
	l.validate(&c)
	return c.Result()
}

// trainerConfig is config after check: what a recipe trains under.
func (l LoopSpec) trainerConfig(env *registry.Env) (trainer.Config, error) {
	if err := l.check(); err != nil {
		return trainer.Config{}, err
	}
	return l.config(env), nil
}

// validate records every bad optimisation setting.
func (l LoopSpec) validate(c *registry.Checks) {
	c.Add(l.LearningRate > 0, "learning_rate", "%v must be positive", l.LearningRate)
	c.Add(l.BatchSize >= 2, "batch_size", "%d must be at least 2 (in-batch negatives)", l.BatchSize)
	c.Add(l.Epochs >= 1 || l.MaxSteps > 0, "epochs", "%d must be at least 1 (or set max_steps)", l.Epochs)
	c.NonNegative("max_steps", l.MaxSteps)
	c.NonNegative("warmup", l.Warmup)
	c.Add(l.WarmupRatio >= 0 && l.WarmupRatio < 1, "warmup_ratio", "%v must be in [0, 1)", l.WarmupRatio)
	c.Add(l.Warmup == 0 || l.WarmupRatio == 0, "warmup_ratio", "%v with warmup = %d: give the warm-up one way, in updates or as a share of them", l.WarmupRatio, l.Warmup)
	c.Add(l.WeightDecay >= 0, "weight_decay", "%v is negative", l.WeightDecay)
	c.Add(l.GradClip >= 0, "grad_clip", "%v is negative", l.GradClip)
	c.Positive("accumulation", l.Accumulation)
	c.NonNegative("eval_every", l.EvalEvery) // 0: at the end of each epoch
	c.NonNegative("patience", l.Patience)
	if _, err := backend.ParsePrecision(l.Precision); err != nil {
		c.OneOf("precision", l.Precision, backend.Precisions()...)
	}
}

// Fit trains m's parameters on n examples with step, evaluating on dev
// (may be nil) with the model's current Pooling, reporting progress to
// env.Progress and env.Log, and keeping the resumable state in env.Work.
// On return m holds the best evaluated weights (the last ones without
// dev). The trainer's errors (a NaN loss, a state file from another
// configuration) come back wrapped with the step.
func Fit(ctx context.Context, env *registry.Env, m *pooled.Model, n int, step trainer.StepFunc, dev *pooled.DevSet, loop LoopSpec) (*trainer.Result, error) {
	return FitParams(ctx, env, trainer.FromNamed(m.Encoder.NamedParams()), m, n, step, dev, loop)
}

// FitParams is Fit over an explicit parameter list: for objectives that
// train more than the encoder (a decoder, a prediction head), whose
// parameters follow the encoder's. enc is what dev evaluates; every
// parameter in params is restored to its best-evaluated value.
func FitParams(ctx context.Context, env *registry.Env, params []trainer.Param, enc encoder.Encoder, n int, step trainer.StepFunc, dev *pooled.DevSet, loop LoopSpec) (*trainer.Result, error) {
	return FitEval(ctx, env, params, n, step, contrastive.DevEval(dev, enc), loop)
}

// FitEval is FitParams with any model-selection metric (higher is better;
// nil: no evaluation, the last weights are kept): InfoCSE selects by
// headline recall on validation documents instead of STS-B dev.
func FitEval(ctx context.Context, env *registry.Env, params []trainer.Param, n int, step trainer.StepFunc, eval trainer.EvalFunc, loop LoopSpec) (*trainer.Result, error) {
	return fit(ctx, env, trainer.Recipe{Params: params, N: n, Step: step, Eval: eval}, loop, "examples")
}

// fit drives rec under loop in env, after checking loop and that a batch
// fits in rec's examples (what names them in the error).
func fit(ctx context.Context, env *registry.Env, rec trainer.Recipe, loop LoopSpec, what string) (*trainer.Result, error) {
	if err := loop.check(); err != nil {
		return nil, err
	}
	if loop.BatchSize > rec.N {
		return nil, fmt.Errorf("batch_size: %d is larger than the %d training %s", loop.BatchSize, rec.N, what)
	}
	return trainer.Drive(ctx, rec, loop.config(env), output(env))
}

// output reports a driven run through env: its progress line and log.
func output(env *registry.Env) trainer.Output {
	return trainer.Output{Log: env.Logger(), Report: env.Report}
}

// History is training.json in a trained encoder artifact
// (internal/contrastive's).
type History = contrastive.History

// FileHistory is the name of the training history inside the artifact.
const FileHistory = contrastive.FileHistory

// SaveModel writes m (with evaluation pooling p) and the run's history to
// the stage's `model` output.
func SaveModel(env *registry.Env, m *pooled.Model, p transformer.Pooling, stage string, n int, res *trainer.Result) error {
	// SimCSE encodes evaluation sentences untruncated.
	return SaveModelLimit(env, m, p, 0, stage, n, res)
}

// SaveModelLimit is SaveModel for a model that encodes at most maxLength
// token ids per sentence (0: the model's position limit): InfoCSE
// truncates every sentence to 32 tokens, in evaluation too.
func SaveModelLimit(env *registry.Env, m *pooled.Model, p transformer.Pooling, maxLength int, stage string, n int, res *trainer.Result) error {
	dir := env.Output("model")
	m.Pooling = p
	m.MaxLength = maxLength
	if err := m.Save(dir, map[string]any{"trained_by": stage, "steps": res.Steps, "best_step": res.BestStep}); err != nil {
		return err
	}
	return contrastive.WriteHistory(dir, contrastive.HistoryOf(stage, n, res))
}
