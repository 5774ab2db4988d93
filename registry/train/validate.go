package train

import (
	"math"

	"repro/internal/dataset"
	"repro/internal/model/transformer"
	"repro/internal/paser"
	"repro/registry"
)

// The train.* parameter checks (registry.Validator), run when the file is
// loaded: the shape of a from-scratch model, the optimisation settings,
// the objective's own parameters.

func checkShape(c *registry.Checks, layers, hidden, heads, intermediate, maxPosition int) {
	c.Positive("layers", layers)
	c.Positive("heads", heads)
	c.Add(hidden >= 1 && heads >= 1 && hidden%heads == 0, "hidden", "%d must be a positive multiple of heads (%d)", hidden, heads)
	c.Positive("intermediate", intermediate)
	c.Add(maxPosition >= 8, "max_position", "%d is too small (need at least 8)", maxPosition)
}

// validate checks the from-scratch architecture (only used, and only
// checked, when no checkpoint is named).
func (a Architecture) validate(c *registry.Checks) {
	if a.HFCheckpoint != "" {
		return
	}
	checkShape(c, a.Layers, a.Hidden, a.Heads, a.Intermediate, a.MaxPosition)
	c.OneOf("vocab", a.Vocab, VocabBERT, VocabTrain, VocabBPE)
	switch a.Vocab {
	case VocabTrain:
		c.Add(a.VocabSize >= 100, "vocab_size", "%d is too small for a trained vocabulary (need at least 100)", a.VocabSize)
	case VocabBPE:
		c.Add(a.VocabSize >= 300, "vocab_size", "%d is too small for a byte-level BPE vocabulary (need at least 300: 5 special tokens and 256 bytes come first)", a.VocabSize)
	}
	if a.GloVeInit {
		d, ok := dataset.Lookup(a.GloVe)
		f, isVec := dataset.File{}, false
		if ok {
			f, isVec = d.File("vectors")
		}
		c.Add(a.GloVe != "", "glove", "empty, but glove_init is set")
		c.Add(a.GloVe == "" || isVec && f.Format == dataset.FormatGloVeGz, "glove", "%q is not a word-vector dataset of the catalogue", a.GloVe)
	}
}

func checkPooling(c *registry.Checks, name, v string, emptyOK bool) {
	if v == "" && emptyOK {
		return
	}
	c.OneOf(name, v, transformer.PoolingNames()...)
}

func checkEncoderInput(c *registry.Checks, maxLength int, dropout float64) {
	c.Add(maxLength >= 3, "max_length", "%d must be at least 3 ([CLS], a token, [SEP])", maxLength)
	c.Add(dropout >= 0 && dropout < 1, "dropout", "%v must lie in [0, 1)", dropout)
}

func checkTemperature(c *registry.Checks, t float64) {
	c.Add(t > 0 && !math.IsInf(t, 0), "temperature", "%v must be positive", t)
}

// Validate checks every parameter of train.simcse_unsup.
func (p *SimCSEUnsupParams) Validate() error {
	var c registry.Checks
	checkEncoderInput(&c, p.MaxLength, p.Dropout)
	checkTemperature(&c, p.Temperature)
	checkPooling(&c, "pooling", p.Pooling, false)
	c.NonNegative("max_sentences", p.MaxSentences)
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	p.Architecture.validate(&c)
	return c.Result()
}

// Validate checks every parameter of train.simcse_sup.
func (p *SimCSESupParams) Validate() error {
	var c registry.Checks
	checkEncoderInput(&c, p.MaxLength, p.Dropout)
	checkTemperature(&c, p.Temperature)
	checkPooling(&c, "pooling", p.Pooling, false)
	c.NonNegative("max_triplets", p.MaxTriplets)
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	p.Architecture.validate(&c)
	return c.Result()
}

func checkObjective(c *registry.Checks, decoderLayers int, m, n float64, memory string, maxTarget int, pooling, evalPooling string) {
	c.Positive("decoder_layers", decoderLayers)
	c.Add(m >= 0 && !math.IsInf(m, 0), "m", "%v must be a non-negative number", m)
	c.Add(n >= 0 && !math.IsInf(n, 0), "n", "%v must be a non-negative number", n)
	c.OneOf("memory", memory, string(paser.MemorySlots), string(paser.MemoryProject))
	c.Add(maxTarget >= 2, "max_target_length", "%d must be at least 2 (BOS, SEP)", maxTarget)
	checkPooling(c, "pooling", pooling, false)
	checkPooling(c, "eval_pooling", evalPooling, true)
}

// Validate checks every parameter of train.paser.
func (p *PaSeRParams) Validate() error {
	var c registry.Checks
	checkObjective(&c, p.DecoderLayers, p.M, p.N, p.Memory, p.MaxTargetLength, p.Pooling, p.EvalPooling)
	checkEncoderInput(&c, p.MaxLength, p.Dropout)
	c.Add(!p.MLM || p.MLMProbability > 0 && p.MLMProbability < 1, "mlm_probability", "%v must lie in (0, 1)", p.MLMProbability)
	c.NonNegative("max_pairs", p.MaxPairs)
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	p.Architecture.validate(&c)
	return c.Result()
}

// Validate checks every parameter of train.paser_sup.
func (p *PaSeRSupParams) Validate() error {
	var c registry.Checks
	checkObjective(&c, p.DecoderLayers, p.M, p.N, p.Memory, p.MaxTargetLength, p.Pooling, p.EvalPooling)
	checkEncoderInput(&c, p.MaxLength, p.Dropout)
	checkTemperature(&c, p.Temperature)
	c.Add(p.Alpha >= 0 && !math.IsInf(p.Alpha, 0), "alpha", "%v must be a non-negative number", p.Alpha)
	c.NonNegative("max_triplets", p.MaxTriplets)
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	return c.Result()
}
