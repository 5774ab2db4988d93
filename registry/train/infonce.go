package train

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/encoder/pooled"
	"repro/internal/infocse"
	"repro/internal/model/transformer"
	"repro/internal/rows"
	"repro/internal/tensor/loss"
	"repro/internal/trainer"
	"repro/registry"
)

// Contrast is the parameter group of the InfoCSE objectives: how anchors
// are scored against the batch's candidates.
type Contrast struct {
	Similarity  string  `cty:"similarity" doc:"dot (the inner product of InfoCSE's eq. 1) or cosine"`
	Temperature float64 `cty:"temperature" doc:"the similarities are divided by it (1: eq. 1 as printed)"`
}

// Validation is the parameter group of InfoCSE's model selection.
type Validation struct {
	ValidationK int `cty:"validation_k" doc:"with validation connected: select (and stop early) by recall@k x 100 of each validation document's headline among theirs (paper: R@5)"`
	// Added after results were cached: the default ranks as before.
	ValidationSimilarity string `cty:"validation_similarity" key:"added" doc:"how that recall ranks the headlines: cosine, or dot (the inner product InfoCSE trains and clusters with, as evaluate.retrieval's similarity)"`
}

// validate checks the selection settings.
func (v Validation) validate(c *registry.Checks) {
	c.Positive("validation_k", v.ValidationK)
	if v.ValidationSimilarity != "" { // "" (a Go caller's zero value) ranks by cosine
		c.OneOf("validation_similarity", v.ValidationSimilarity, string(infocse.Dot), string(infocse.Cosine))
	}
}

// similarity is the selection's ranking ("" ranks by cosine).
func (v Validation) similarity() infocse.Similarity {
	if v.ValidationSimilarity == "" {
		return infocse.Cosine
	}
	return infocse.Similarity(v.ValidationSimilarity)
}

// InfoNCEParams are train.infonce's parameters. The defaults are InfoCSE's
// pretraining settings (Table 5 and Appendix C: Adam, lr 2e-5, batch
// 3,200, 32 tokens per sentence, at most 0.2M steps, early stopping on
// R@5 with a patience of 20,000 steps: 10 evaluations 2,000 steps apart).
type InfoNCEParams struct {
	LearningRate      float64 `cty:"learning_rate" doc:"peak learning rate (paper: 2e-5)"`
	BatchSize         int     `cty:"batch_size" doc:"pairs per batch; the other pairs' positives are each anchor's negatives (paper: 3,200)"`
	MaxLength         int     `cty:"max_length" doc:"token ids per anchor sentence, [CLS] and [SEP] included (paper: 32)"`
	PositiveMaxLength int     `cty:"positive_max_length" doc:"token ids per positive; 0 = max_length (ICT's contexts are longer than a sentence)"`
	Contrast
	MaskSameDocument bool `cty:"mask_same_document" doc:"positives of other pairs from the anchor's document are no negatives (they are likely false negatives)"`
	Swap             bool `cty:"swap" doc:"pairs are unordered: each time a pair is drawn a coin from the trainer's generator picks its anchor; false keeps anchor -> positive (ICT: sentence -> context)"`
	Epochs           int  `cty:"epochs" doc:"passes over the pairs (max_steps > 0 overrides)"`
	MaxSteps         int  `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide (paper: at most 0.2M)"`
	Validation
	Optimisation
	Dropout float64 `cty:"dropout" doc:"hidden and attention dropout"`
	Pooling string  `cty:"pooling" doc:"sentence vector: cls | cls_before_pooler | mean | first_last_avg | top2_avg"`

	Architecture
}

// contrastPorts are the inputs of the InfoCSE training types.
func contrastPorts(data registry.Kind, dataDoc string) []registry.Port {
	return []registry.Port{
		{Name: "data", Kind: data, Doc: dataDoc},
		{Name: "validation", Kind: registry.KindDocuments, Optional: true, Doc: "validation documents with headlines: evaluate every eval_every updates by recall@validation_k, keep the best weights (absent: keep the last)"},
		{Name: "init", Kind: registry.KindEncoder, Optional: true, Doc: "a transformer encoder to continue training (overrides hf_checkpoint and the architecture): the previous round's model"},
	}
}

func infonceType() *registry.StageType {
	return &registry.StageType{
		Name:    "train.infonce",
		Version: 1,
		Doc: `InfoCSE's contrastive learning on positive pairs from inside documents (eq. 1 and 5):
anchor i scored against every positive of the batch by the inner product (cosine / temperature as
an option), cross-entropy with target i. With mask_same_document, positives of other pairs from the
anchor's own document leave its softmax: at the paper's batch of 3,200 several pairs of one
document meet, and their sentences share its topic. Trains IDC rounds (annotate.idc pairs) and the
CONPONO / ICT initialisations (annotate.conpono, annotate.ict).`,
		Params: InfoNCEParams{
			LearningRate: 2e-5, BatchSize: 3200, MaxLength: 32,
			Contrast:         Contrast{Similarity: string(infocse.Dot), Temperature: 1},
			MaskSameDocument: true, Swap: true, Epochs: 1, MaxSteps: 200000,
			Validation:   Validation{ValidationK: 5, ValidationSimilarity: string(infocse.Cosine)},
			Optimisation: Optimisation{EvalEvery: 2000, Patience: 10, GradClip: 1, Accumulation: 1, Precision: "fp32"},
			Dropout:      0.1, Pooling: string(transformer.PoolCLSBeforePooler),
			Architecture: DefaultArchitecture(),
		},
		Inputs:    contrastPorts(registry.KindDocPairs, "positive pairs (annotate.*): doc, anchor, positive"),
		Outputs:   modelOutput,
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*InfoNCEParams).externals(), nil },
		Run:       runInfoNCE,
		Cost:      infonceCost,
	}
}

// validate checks the shared contrast settings.
func (c Contrast) validate(ch *registry.Checks) {
	ch.OneOf("similarity", c.Similarity, string(infocse.Dot), string(infocse.Cosine))
	checkTemperature(ch, c.Temperature)
}

// Validate checks every parameter of train.infonce.
func (p *InfoNCEParams) Validate() error {
	var c registry.Checks
	checkEncoderInput(&c, p.MaxLength, p.Dropout)
	c.Add(p.PositiveMaxLength == 0 || p.PositiveMaxLength >= 3, "positive_max_length", "%d must be 0 (= max_length) or at least 3", p.PositiveMaxLength)
	p.Contrast.validate(&c)
	checkPooling(&c, "pooling", p.Pooling, false)
	p.Validation.validate(&c)
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	p.Architecture.validate(&c)
	return c.Result()
}

// Validate checks every parameter of train.headline.
func (p *HeadlineParams) Validate() error {
	var c registry.Checks
	checkEncoderInput(&c, p.MaxLength, p.Dropout)
	c.NonNegative("max_sentences", p.MaxSentences)
	p.Contrast.validate(&c)
	checkPooling(&c, "pooling", p.Pooling, false)
	p.Validation.validate(&c)
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	p.Architecture.validate(&c)
	return c.Result()
}

// readData reads the rows of file in the `data` input; none is an error.
func readData[T any](env *registry.Env, file string) ([]T, string, error) {
	a, err := env.Input("data")
	if err != nil {
		return nil, "", err
	}
	path := a.Path(file)
	rs, err := rows.Read[T](path)
	if err != nil {
		return nil, path, fmt.Errorf("data: %w", err)
	}
	if len(rs) == 0 {
		return nil, path, fmt.Errorf("data: %s: no rows", path)
	}
	return rs, path, nil
}

// loadValidation reads the optional `validation` input for headline
// recall; nil when it is not connected.
func loadValidation(env *registry.Env) (*infocse.Headlines, error) {
	a, ok := env.Inputs["validation"]
	if !ok {
		return nil, nil
	}
	path := a.Path(registry.FileDocuments)
	docs, err := rows.Read[rows.Document](path)
	if err != nil {
		return nil, fmt.Errorf("validation: %w", err)
	}
	h, err := infocse.NewHeadlines(docs, "validation: "+path)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// recallEval is the trainer's metric: headline recall@k of m on h, ranked
// by v's similarity (nil without validation).
func recallEval(h *infocse.Headlines, m *pooled.Model, v Validation) trainer.EvalFunc {
	if h == nil {
		return nil
	}
	k, sim := v.ValidationK, v.similarity()
	return func(ctx context.Context) (float64, error) { return h.RecallBy(ctx, m, k, sim) }
}

func runInfoNCE(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*InfoNCEParams)
	pool, cosine := trainPooling(p.Pooling), p.Similarity == string(infocse.Cosine)
	spec := p.Spec(p.Dropout, pool)
	posLen := p.PositiveMaxLength
	if posLen == 0 {
		posLen = p.MaxLength
	}
	pairs, path, err := readData[rows.DocPair](env, registry.FilePairs)
	if err != nil {
		return err
	}
	groups := make([]int, len(pairs))
	docIndex := map[string]int{}
	anchors, positives := make([]string, len(pairs)), make([]string, len(pairs))
	corpus := make([]string, 0, 2*len(pairs))
	for i, r := range pairs {
		if strings.TrimSpace(r.Anchor) == "" || strings.TrimSpace(r.Positive) == "" {
			return fmt.Errorf("data: %s row %d: empty anchor or positive", path, i+1)
		}
		g, ok := docIndex[r.Doc]
		if !ok {
			g = len(docIndex)
			docIndex[r.Doc] = g
		}
		groups[i] = g
		anchors[i], positives[i] = r.Anchor, r.Positive
		corpus = append(corpus, r.Anchor, r.Positive)
	}
	val, err := loadValidation(env)
	if err != nil {
		return err
	}
	m, err := BuildModel(env, spec, corpus)
	if err != nil {
		return err
	}
	as, ps := m.Tokenize(anchors, p.MaxLength), m.Tokenize(positives, posLen)
	temp := float32(p.Temperature)
	step := func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		n := len(batch)
		left, right := make([][]int, n), make([][]int, n)
		var g []int
		if p.MaskSameDocument {
			g = make([]int, n)
		}
		for k, i := range batch {
			left[k], right[k] = as[i], ps[i]
			if p.Swap && rng.IntN(2) == 1 {
				left[k], right[k] = right[k], left[k]
			}
			if g != nil {
				g[k] = groups[i]
			}
		}
		// Two forward passes, so short anchors are not padded to the
		// length of long positives (ICT contexts).
		za, err := m.Embed(left, pool, rng)
		if err != nil {
			return nil, err
		}
		zp, err := m.Embed(right, pool, rng)
		if err != nil {
			return nil, err
		}
		return loss.InfoNCEMasked(za, zp, temp, cosine, g)
	}
	return fitAndSave(ctx, env, m, pool, p.MaxLength, "train.infonce", len(pairs), step,
		recallEval(val, m, p.Validation), p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps))
}

// fitAndSave trains m on n examples, selecting by eval (nil: the last
// weights), and saves it to read at most maxLength tokens per sentence.
// Validation encodes as the saved model will.
func fitAndSave(ctx context.Context, env *registry.Env, m *pooled.Model, pool transformer.Pooling, maxLength int, stage string, n int, step trainer.StepFunc, eval trainer.EvalFunc, loop LoopSpec) error {
	m.Pooling, m.MaxLength = pool, maxLength
	res, err := FitEval(ctx, env, trainer.FromNamed(m.Encoder.NamedParams()), n, step, eval, loop)
	if err != nil {
		return err
	}
	return SaveModelLimit(env, m, pool, maxLength, stage, n, res)
}
