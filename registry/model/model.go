// Package model holds the model.* stage types: a local Hugging Face
// checkpoint (BERT, RoBERTa, GPT-2, T5) loaded as it is, without training,
// and written as exactly the artifact a training stage of its family
// writes, so that every stage that takes a trained model takes it. They are
// how a reviewer scores the authors' released models (SimCSE's, GenSE's,
// SynCSE's, DINO's) on the papers' benchmarks: one stage in place of the
// training stage, the rest of the pipeline unchanged.
//
//   - model.hf_encoder: a BERT/RoBERTa sentence encoder (registry.KindEncoder,
//     encoder.json type "transformer"), as train.simcse_* writes it.
//   - model.hf_t5_encoder: a T5 sentence encoder (KindEncoder, type "t5"),
//     as train.t5_contrastive writes it (GenSE's released model).
//   - model.hf_lm: a GPT-2 or T5 language model (KindLanguageModel), as
//     train.causal_lm and train.seq2seq write it.
//
// Design choices:
//
//   - The checkpoint is read through the same loaders a training stage's
//     hf_checkpoint goes through and written by the same savers, so the
//     artifact's weights are the checkpoint's bit for bit (float32), in
//     model.safetensors whatever the source's sharding, with the tokenizer
//     files repro reads. A training stage given the same directory and no
//     steps would write the same weights; its training.json here records
//     zero steps (BestStep -1) and "source": "checkpoint".
//   - The parameter is `checkpoint` (path:"checkpoint", resolved against the
//     file that names it); its content -- every file in the directory --
//     is in the stage's key through Externals, as hf_checkpoint's is in the
//     training stages', so a replaced checkpoint re-runs the stage. The
//     artifact carries no host path.
//   - Settings that belong to how a model is used rather than to its
//     weights (pooling, the T5 prompt template, the longest input) are this
//     stage's parameters, with the defaults of the training stage that
//     would have produced such a model.
package model

import (
	"context"
	"fmt"
	"path/filepath"

	"repro/internal/encoder/pooled"
	"repro/internal/encoder/t5enc"
	"repro/internal/model/gpt2"
	"repro/internal/model/lm"
	"repro/internal/model/t5"
	"repro/internal/model/transformer"
	"repro/internal/prompt"
	"repro/registry"
	"repro/registry/train"
)

// Register adds the model.* stage types to r and registers the encoder
// types their artifacts have ("transformer", "t5"), so they open in this
// process.
func Register(r *registry.Registry) {
	pooled.Register()
	t5enc.Register()
	r.Add(hfEncoderType())
	r.Add(hfT5EncoderType())
	r.Add(hfLMType())
}

// Source is the value of "source" in the artifacts' training.json and
// config.json's repro section: the weights are a checkpoint's, untrained.
const Source = "checkpoint"

// checkpointExternals names the checkpoint directory: its content is in the
// stage's key, its path is not.
func checkpointExternals(dir string) []registry.External {
	return []registry.External{{Name: "checkpoint", Path: dir}}
}

// checkDir says, in words, why dir cannot be a checkpoint (run time: the
// loader checked it at load time, but the directory may have gone since).
func checkDir(dir string) error {
	if dir == "" {
		return registry.Paramf("checkpoint", "is required: a local Hugging Face model directory")
	}
	if err := registry.CheckPath(registry.PathCheckpoint, dir); err != nil {
		return registry.Paramf("checkpoint", "%v", err)
	}
	return nil
}

// checkStart refuses, before a run starts, a stage whose checkpoint is ""
// (an experiment's -var left unset): a paper profile's released row then
// stops with the others that need weights, not after the data stages ran.
func checkStart(dir string) error {
	if dir == "" {
		return registry.Paramf("checkpoint", "no checkpoint: set it to a local Hugging Face model directory (the experiments take the released models by -var)")
	}
	return nil
}

// CheckStart implements registry.StartChecker.
func (p HFEncoderParams) CheckStart(func(string) bool) error { return checkStart(p.Checkpoint) }

// CheckStart implements registry.StartChecker.
func (p HFT5EncoderParams) CheckStart(func(string) bool) error { return checkStart(p.Checkpoint) }

// CheckStart implements registry.StartChecker.
func (p HFLMParams) CheckStart(func(string) bool) error { return checkStart(p.Checkpoint) }

// untrained is the training.json of a loaded model: no examples, no steps,
// no evaluation (the shape train.History has for every encoder artifact).
func untrained(stage string) train.History {
	return train.History{Stage: stage, Steps: 0, BestStep: -1}
}

func writeHistory(dir string, v any) error {
	return registry.WriteJSON(filepath.Join(dir, train.FileHistory), v)
}

// ---- model.hf_encoder -----------------------------------------------------

// HFEncoderParams are model.hf_encoder's parameters.
type HFEncoderParams struct {
	Checkpoint string `cty:"checkpoint" path:"checkpoint" required:"true" doc:"local Hugging Face BERT or RoBERTa directory (config.json, model.safetensors or its shards, vocab.txt or vocab.json + merges.txt)"`
	Pooling    string `cty:"pooling" doc:"how a sentence vector is read: cls (through the checkpoint's pooler: SimCSE's supervised models, whose MLP head its converter saves as the pooler), cls_before_pooler (SimCSE's unsupervised models), mean (sentence-transformers models such as DINO's), first_last_avg, top2_avg"`
	MaxLength  int    `cty:"max_length" doc:"token ids per sentence at most ([CLS] and [SEP] included) when encoding; 0 = the model's position limit (SimCSE's evaluation: untruncated)"`
}

// Validate checks the pooling and length at load time.
func (p *HFEncoderParams) Validate() error {
	var c registry.Checks
	c.OneOf("pooling", p.Pooling, transformer.PoolingNames()...)
	c.NonNegative("max_length", p.MaxLength)
	return c.Result()
}

func hfEncoderType() *registry.StageType {
	return &registry.StageType{
		Name:    "model.hf_encoder",
		Version: 1,
		Doc: `A local Hugging Face BERT or RoBERTa checkpoint as a sentence encoder, weights unchanged:
the artifact train.simcse_sup writes (encoder.json type "transformer", config.json, model.safetensors,
tokenizer files, training.json with zero steps), so every evaluate.*, encode.* and train.* stage that
takes a trained encoder takes it. For a released model (SimCSE's, SynCSE's, DINO's): pooling "cls"
for a supervised SimCSE-style model whose MLP head is saved as BERT's pooler, "cls_before_pooler" for
an unsupervised one, "mean" for a sentence-transformers model. The checkpoint's content is in the key.`,
		Params: HFEncoderParams{Pooling: string(transformer.PoolCLSBeforePooler)},
		Outputs: []registry.Port{{Name: "model", Kind: registry.KindEncoder,
			Doc: "the sentence encoder (type transformer): Hugging Face directory + encoder.json + training.json"}},
		Tensor: true,
		Externals: func(p any) ([]registry.External, error) {
			return checkpointExternals(p.(*HFEncoderParams).Checkpoint), nil
		},
		Run: runHFEncoder,
	}
}

func runHFEncoder(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*HFEncoderParams)
	if err := checkDir(p.Checkpoint); err != nil {
		return err
	}
	pool := transformer.Pooling(p.Pooling)
	m, err := pooled.FromHF(p.Checkpoint, pool)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// The artifact a training stage saves: pooling and length in
	// encoder.json, provenance in config.json's repro section.
	m.Pooling, m.MaxLength = pool, p.MaxLength
	dir := env.Output("model")
	if err := m.Save(dir, map[string]any{"trained_by": "model.hf_encoder", "source": Source, "steps": 0, "best_step": -1}); err != nil {
		return err
	}
	return writeHistory(dir, untrained("model.hf_encoder"))
}

// ---- model.hf_t5_encoder --------------------------------------------------

// HFT5EncoderParams are model.hf_t5_encoder's parameters; the defaults are
// train.t5_contrastive's (GenSE's T_s prompt, the first decoder output).
type HFT5EncoderParams struct {
	Checkpoint string `cty:"checkpoint" path:"checkpoint" required:"true" doc:"local Hugging Face T5 directory (config.json, model.safetensors, spiece.model or tokenizer.json)"`
	Mode       string `cty:"mode" doc:"\"encdec\" (first decoder output, pad fed to the decoder: GenSE, ST5-EncDec) or \"mean\" (mean of encoder outputs: ST5-Enc)"`
	Template   string `cty:"template" doc:"prompt around each sentence, [X] its place (GenSE's T_s); \"\" = the sentence alone"`
	MaxLength  int    `cty:"max_length" doc:"encoder tokens per input at most (EOS included); 0 = no limit"`
}

// Validate checks every parameter at load time.
func (p *HFT5EncoderParams) Validate() error {
	var c registry.Checks
	c.OneOf("mode", p.Mode, t5enc.ModeEncDec, t5enc.ModeMean)
	if p.Template != "" {
		if _, err := prompt.Parse(p.Template, 1); err != nil {
			c.Add(false, "template", "%v", err)
		}
	}
	c.Add(p.MaxLength == 0 || p.MaxLength >= 2, "max_length", "%d must be 0 (no limit) or at least 2 (a token and EOS)", p.MaxLength)
	return c.Result()
}

func hfT5EncoderType() *registry.StageType {
	return &registry.StageType{
		Name:    "model.hf_t5_encoder",
		Version: 1,
		Doc: `A local Hugging Face T5 checkpoint as a sentence encoder, weights unchanged: the artifact
train.t5_contrastive writes (a T5 directory plus encoder.json type "t5" and training.json with zero
steps), with its mode, template and max_length (the defaults are train.t5_contrastive's: GenSE's T_s
prompt and the decoder's first output, GenSE's released gense-base). The checkpoint's content is in
the key.`,
		Params: HFT5EncoderParams{Mode: t5enc.ModeEncDec, Template: "[X] Question: what can we draw from the above sentence?", MaxLength: 64},
		Outputs: []registry.Port{{Name: "model", Kind: registry.KindEncoder,
			Doc: "the sentence encoder (type t5): a Hugging Face T5 directory plus encoder.json and training.json"}},
		Tensor: true,
		Externals: func(p any) ([]registry.External, error) {
			return checkpointExternals(p.(*HFT5EncoderParams).Checkpoint), nil
		},
		Run: runHFT5Encoder,
	}
}

func runHFT5Encoder(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*HFT5EncoderParams)
	if err := checkDir(p.Checkpoint); err != nil {
		return err
	}
	m, tok, err := t5.Load(p.Checkpoint)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if tok == nil {
		return fmt.Errorf("checkpoint: %s has no tokenizer files (spiece.model or tokenizer.json)", p.Checkpoint)
	}
	enc, err := t5enc.New(m, tok, p.Mode, p.Template, p.MaxLength)
	if err != nil {
		return err
	}
	dir := env.Output("model")
	if err := enc.Save(dir, map[string]any{"trained_by": "model.hf_t5_encoder", "source": Source, "steps": 0, "best_step": -1}); err != nil {
		return err
	}
	return writeHistory(dir, untrained("model.hf_t5_encoder"))
}

// ---- model.hf_lm ----------------------------------------------------------

// HFLMParams are model.hf_lm's parameters.
type HFLMParams struct {
	Checkpoint string `cty:"checkpoint" path:"checkpoint" required:"true" doc:"local Hugging Face GPT-2 directory (config.json, model.safetensors, vocab.json, merges.txt) or T5 directory (config.json, model.safetensors, spiece.model or tokenizer.json); config.json's model_type says which"`
}

// LMHistory is training.json of a loaded language model, the fields
// train.causal_lm's and train.seq2seq's histories share.
type LMHistory struct {
	Stage    string  `json:"stage"`
	Source   string  `json:"source"`
	Family   string  `json:"family"` // gpt2 | t5
	Steps    int     `json:"steps"`
	LastLoss float64 `json:"last_loss"`
	BestStep int     `json:"best_step"`
}

func hfLMType() *registry.StageType {
	return &registry.StageType{
		Name:    "model.hf_lm",
		Version: 1,
		Doc: `A local Hugging Face GPT-2 or T5 checkpoint as a language model, weights unchanged: the
artifact train.causal_lm (GPT-2) or train.seq2seq (T5) writes, so every generate.*, synth.*,
evaluate.perplexity and train.* stage that takes a trained language model takes it (DINO's GPT2-XL,
GenSE's released nli-synthesizer-t5-base). Prompts are framed as for any checkpoint from elsewhere (no
end-of-text token first), unless the checkpoint is one repro trained that way. The checkpoint's
content is in the key.`,
		Params: HFLMParams{},
		Outputs: []registry.Port{{Name: "model", Kind: registry.KindLanguageModel,
			Doc: "the language model: Hugging Face GPT-2 or T5 directory plus training.json"}},
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return checkpointExternals(p.(*HFLMParams).Checkpoint), nil },
		Run:       runHFLM,
	}
}

func runHFLM(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*HFLMParams)
	if err := checkDir(p.Checkpoint); err != nil {
		return err
	}
	l, err := lm.Open(p.Checkpoint)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	repro := map[string]any{"trained_by": "model.hf_lm", "source": Source, "steps": 0, "best_step": -1}
	dir := env.Output("model")
	switch l.Family {
	case "gpt2":
		// Keep the framing of a model repro trained (prompts begin with
		// the end-of-text token), so the artifact generates as the
		// checkpoint does.
		if l.BOS {
			repro["bos"] = true
		}
		tok, err := gpt2.LoadTokenizer(p.Checkpoint)
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if err := gpt2.Save(dir, l.GPT2, tok, repro); err != nil {
			return err
		}
	case "t5":
		if err := t5.Save(dir, l.T5, l.T5Text.Tok, repro); err != nil {
			return err
		}
	default:
		return fmt.Errorf("checkpoint: %s: model_type %q is not a language model family repro has (gpt2, t5)", p.Checkpoint, l.Family)
	}
	return writeHistory(dir, LMHistory{Stage: "model.hf_lm", Source: Source, Family: l.Family, BestStep: -1})
}
