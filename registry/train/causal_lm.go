package train

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"repro/internal/clm"
	"repro/internal/model/gpt2"
	"repro/internal/model/tokenizer"
	"repro/internal/rows"
	"repro/registry"
)

// RegisterLM adds the causal language-model trainer (train.causal_lm).
func RegisterLM(r *registry.Registry) { r.Add(causalLMType()) }

// Vocabulary sources of a from-scratch language model.
const (
	LMVocabGPT2  = "gpt2"  // the catalogue's GPT-2 vocab.json and merges.txt
	LMVocabTrain = "train" // a byte-level BPE vocabulary trained on the training texts
)

// LMArchitecture is where train.causal_lm's model comes from when no init
// input is connected: a local Hugging Face GPT-2 directory, or a model of
// this shape trained from scratch. Defaults: GPT-2 small (124M) with
// GPT-2's vocabulary, and no training from scratch unless asked.
type LMArchitecture struct {
	HFCheckpoint string `cty:"hf_checkpoint" path:"checkpoint" doc:"local Hugging Face GPT-2 directory (config.json, model.safetensors, vocab.json, merges.txt) to continue training; when set the architecture parameters are ignored"`
	FromScratch  bool   `cty:"from_scratch" doc:"without init or hf_checkpoint, train the architecture below from random weights; false makes a missing checkpoint an error"`
	Layers       int    `cty:"layers" doc:"from scratch: transformer blocks (n_layer)"`
	Hidden       int    `cty:"hidden" doc:"from scratch: width (n_embd)"`
	Heads        int    `cty:"heads" doc:"from scratch: attention heads (n_head)"`
	Inner        int    `cty:"inner" doc:"from scratch: feed-forward width (n_inner); 0 = 4 x hidden"`
	Context      int    `cty:"context" doc:"from scratch: context window in tokens (n_positions)"`
	Vocab        string `cty:"vocab" doc:"from scratch: \"gpt2\" (GPT-2's 50,257-token vocabulary) or \"train\" (a byte-level BPE vocabulary trained on the training texts)"`
	VocabSize    int    `cty:"vocab_size" doc:"from scratch with vocab = \"train\": vocabulary size (<|endoftext|> and 256 byte symbols included)"`
}

var errNoGPT2 = errors.New("no pretrained model: set hf_checkpoint to a local Hugging Face GPT-2 directory (the experiments take it as -var gpt2=DIR), connect init, or set from_scratch = true to train the architecture parameters from random weights (the mini profiles do)")

// CheckStart refuses, before a run starts, a stage that has neither init,
// a checkpoint nor leave to train from scratch (registry.StartChecker).
func (a LMArchitecture) CheckStart(connected func(string) bool) error {
	return needModel(a.HFCheckpoint, a.FromScratch, connected("init"), errNoGPT2)
}

// CausalLMParams are train.causal_lm's parameters; the defaults are
// transformers' run_clm.py fine-tuning settings on GPT-2 small.
type CausalLMParams struct {
	LearningRate float64 `cty:"learning_rate" doc:"peak learning rate (run_clm.py: 5e-5)"`
	BatchSize    int     `cty:"batch_size" doc:"sequences per micro-batch"`
	MaxLength    int     `cty:"max_length" doc:"tokens per training sequence (window); windows overlap by one token, so every token is predicted once"`
	Pack         bool    `cty:"pack" doc:"concatenate the texts (<|endoftext|> between them) and cut the stream into windows of max_length, as run_clm.py's group_texts: no padding; false: each text framed as <|endoftext|> text <|endoftext|> on its own, split into windows when longer"`
	Epochs       int     `cty:"epochs" doc:"passes over the data (max_steps > 0 overrides)"`
	MaxSteps     int     `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	MaxTexts     int     `cty:"max_texts" doc:"train on the first N texts (sentences or documents); 0 = all"`
	DevBatch     int     `cty:"dev_batch" doc:"sequences per batch when scoring the dev texts"`
	Optimisation `doc.eval_every:"updates between dev perplexity evaluations (when dev is connected)"`
	Dropout      float64 `cty:"dropout" doc:"residual, embedding and attention dropout (GPT-2: 0.1)"`

	LMArchitecture
}

// Validate checks every parameter of train.causal_lm (registry.Validator:
// at load time, each at its file:line).
func (p *CausalLMParams) Validate() error {
	var c registry.Checks
	c.Add(p.MaxLength >= 2, "max_length", "%d must be at least 2 (a token and the one it predicts)", p.MaxLength)
	c.NonNegative("max_texts", p.MaxTexts)
	c.Positive("dev_batch", p.DevBatch)
	c.Add(p.Dropout >= 0 && p.Dropout < 1, "dropout", "%v must lie in [0, 1)", p.Dropout)
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	a := p.LMArchitecture
	if a.HFCheckpoint != "" || !a.FromScratch {
		return c.Result()
	}
	c.Positive("layers", a.Layers)
	c.Add(a.Hidden >= 1 && a.Heads >= 1 && a.Hidden%a.Heads == 0, "hidden", "%d must be a positive multiple of heads (%d)", a.Hidden, a.Heads)
	c.Positive("heads", a.Heads)
	c.NonNegative("inner", a.Inner)
	c.Add(a.Context >= p.MaxLength, "context", "%d is shorter than max_length %d", a.Context, p.MaxLength)
	c.OneOf("vocab", a.Vocab, LMVocabGPT2, LMVocabTrain)
	c.Add(a.Vocab != LMVocabTrain || a.VocabSize >= 300, "vocab_size",
		"%d is too small for a trained byte-level vocabulary (<|endoftext|>, 256 byte symbols and merges: at least 300)", a.VocabSize)
	return c.Result()
}

// externals: a Hugging Face checkpoint directory is hashed by content into
// the key.
func (p *CausalLMParams) externals() []registry.External {
	if p.HFCheckpoint == "" {
		return nil
	}
	return []registry.External{{Name: "hf_checkpoint", Path: p.HFCheckpoint}}
}

func causalLMType() *registry.StageType {
	return &registry.StageType{
		Name:    "train.causal_lm",
		Version: 1,
		Doc: `Next-token training of a GPT-2 causal language model on sentences and/or documents: the
texts, <|endoftext|> before, between and after them, are cut into windows of max_length tokens
(pack = true, as run_clm.py; or each text framed on its own); the loss is the mean token
cross-entropy. The model is the init input (a language model to
continue), else hf_checkpoint (a local Hugging Face GPT-2), else a from-scratch model of the given
shape with GPT-2's vocabulary or a byte-level BPE vocabulary trained here on the training texts.
With dev connected, the dev perplexity is measured every eval_every updates and the best weights
are kept. Resumable; bit-identical on CPU for a given seed.`,
		Params: CausalLMParams{
			LearningRate: 5e-5, BatchSize: 8, MaxLength: 128, Pack: true, Epochs: 3, DevBatch: 16,
			Optimisation: DefaultOptimisation(), Dropout: 0.1,
			LMArchitecture: LMArchitecture{Layers: 12, Hidden: 768, Heads: 12, Context: 1024, Vocab: LMVocabGPT2, VocabSize: 8192},
		},
		Inputs: []registry.Port{
			{Name: "data", Kind: registry.KindSentences, Optional: true, Doc: "training sentences (each a text)"},
			{Name: "documents", Kind: registry.KindDocuments, Optional: true, Doc: "training documents (each document's sentences joined by spaces is a text)"},
			{Name: "dev", Kind: registry.KindSentences, Optional: true, Doc: "held-out sentences: dev perplexity every eval_every updates, best weights kept (absent: keep the last)"},
			{Name: "init", Kind: registry.KindLanguageModel, Optional: true, Doc: "a language model to continue training (overrides hf_checkpoint and the architecture)"},
		},
		Outputs:   []registry.Port{{Name: "model", Kind: registry.KindLanguageModel, Doc: "the trained model: Hugging Face GPT-2 directory plus training.json"}},
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*CausalLMParams).externals(), nil },
		Run:       runCausalLM,
		Cost:      causalLMCost,
	}
}

// readTexts reads the training texts: the data sentences, then each
// document's sentences joined by spaces.
func readTexts(env *registry.Env, max int) ([]string, error) {
	var texts []string
	if _, ok := env.Inputs["data"]; ok {
		ss, err := registry.ReadSentences(env, "data", 0)
		if err != nil {
			return nil, err
		}
		texts = append(texts, ss...)
	}
	if a, ok := env.Inputs["documents"]; ok {
		path := a.Path(registry.FileDocuments)
		docs, err := rows.Read[rows.Document](path)
		if err != nil {
			return nil, fmt.Errorf("documents: %w", err)
		}
		for i, d := range docs {
			t := strings.TrimSpace(strings.Join(d.Sentences, " "))
			if t == "" {
				return nil, fmt.Errorf("documents: %s: row %d (%s): no text", path, i+1, d.ID)
			}
			texts = append(texts, t)
		}
	}
	if _, ok := env.Inputs["data"]; !ok {
		if _, ok := env.Inputs["documents"]; !ok {
			return nil, fmt.Errorf("no training text: connect data (sentences) or documents")
		}
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("data: no training texts")
	}
	if max > 0 && len(texts) > max {
		texts = texts[:max]
	}
	return texts, nil
}

// buildLM returns the model and tokenizer to train (see the type's doc).
func buildLM(env *registry.Env, p *CausalLMParams, texts []string) (*gpt2.Model, *tokenizer.BPE, string, error) {
	if init, ok := env.Inputs["init"]; ok {
		m, tok, err := gpt2.Load(init.Dir)
		if err != nil {
			return nil, nil, "", fmt.Errorf("init: %w", err)
		}
		if tok == nil {
			return nil, nil, "", fmt.Errorf("init: %s has no tokenizer", init.Dir)
		}
		return m, tok, "init", nil
	}
	if p.HFCheckpoint != "" {
		if st, err := os.Stat(p.HFCheckpoint); err != nil || !st.IsDir() {
			return nil, nil, "", fmt.Errorf("hf_checkpoint: %s is not a directory (want a Hugging Face GPT-2 directory with config.json, model.safetensors, vocab.json and merges.txt)", p.HFCheckpoint)
		}
		m, tok, err := gpt2.Load(p.HFCheckpoint)
		if err != nil {
			return nil, nil, "", fmt.Errorf("hf_checkpoint: %w", err)
		}
		if tok == nil {
			return nil, nil, "", fmt.Errorf("hf_checkpoint: %s has no vocab.json and merges.txt", p.HFCheckpoint)
		}
		return m, tok, "hf_checkpoint", nil
	}
	if !p.FromScratch {
		return nil, nil, "", errNoGPT2
	}
	var tok *tokenizer.BPE
	switch p.Vocab {
	case LMVocabGPT2:
		vocab, err := catalogue().Path("gpt2", "vocab")
		if err != nil {
			return nil, nil, "", fmt.Errorf("vocab: %w", err)
		}
		merges, err := catalogue().Path("gpt2", "merges")
		if err != nil {
			return nil, nil, "", fmt.Errorf("vocab: %w", err)
		}
		if tok, err = tokenizer.LoadBPE(vocab, merges, tokenizer.BPEOptions{}); err != nil {
			return nil, nil, "", fmt.Errorf("vocab: %w", err)
		}
	default:
		var err error
		if tok, err = tokenizer.TrainBPE(texts, tokenizer.BPETrainOptions{VocabSize: p.VocabSize, Special: tokenizer.GPT2Specials}); err != nil {
			return nil, nil, "", fmt.Errorf("vocab: %w", err)
		}
	}
	eos, ok := tok.ID(gpt2.EndOfText)
	if !ok {
		return nil, nil, "", fmt.Errorf("vocab: the tokenizer has no %s", gpt2.EndOfText)
	}
	c := gpt2.DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead = tok.Size(), p.Context, p.Hidden, p.Layers, p.Heads
	c.BOSTokenID, c.EOSTokenID = eos, eos
	if p.Inner > 0 {
		inner := p.Inner
		c.NInner = &inner
	}
	m, err := gpt2.New(c, rand.New(rand.NewPCG(uint64(env.Seed), 0x6c6d)))
	if err != nil {
		return nil, nil, "", err
	}
	return m, tok, "from_scratch", nil
}

// LMHistory is training.json of train.causal_lm (internal/clm's).
type LMHistory = clm.History

// PPLPoint is one dev evaluation in LMHistory.
type PPLPoint = clm.PPLPoint

func runCausalLM(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*CausalLMParams)
	texts, err := readTexts(env, p.MaxTexts)
	if err != nil {
		return err
	}
	var devTexts []string
	if _, ok := env.Inputs["dev"]; ok {
		if devTexts, err = registry.ReadSentences(env, "dev", 0); err != nil {
			return err
		}
	}
	m, tok, source, err := buildLM(env, p, texts)
	if err != nil {
		return err
	}
	t := &clm.Training{Model: m, Tokenizer: tok, Texts: texts, Dev: devTexts, MaxLength: p.MaxLength, Pack: p.Pack,
		DevBatch: p.DevBatch, Dropout: p.Dropout, Source: source}
	res, err := t.Train(ctx, p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).config(env), output(env), "train.causal_lm")
	if err != nil {
		return err
	}
	return res.Save(env.Output("model"), m, tok)
}
