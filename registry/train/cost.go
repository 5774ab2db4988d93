package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"repro/internal/model/transformer"
	"repro/registry"
)

// bertVocabSize is the size of bert-base-uncased's vocab.txt (VocabBERT).
const bertVocabSize = 30522

// encoderShape is what a cost estimate needs of a BERT-shaped encoder.
type encoderShape struct {
	Layers, Hidden, Intermediate, Vocab int
}

// forward is the FLOPs of one sequence of n tokens through the encoder's
// layers: per layer the query, key, value and output projections
// (4 x 2nH^2), the feed-forward (2 x 2nHI) and attention's scores and
// weighted sum (2 x 2n^2H). Embedding lookups, biases, layer norms,
// softmax and activations are not counted.
func (s encoderShape) forward(n int) float64 {
	l, h, i := float64(n), float64(s.Hidden), float64(s.Intermediate)
	return float64(s.Layers) * (8*l*h*h + 4*l*h*i + 4*l*l*h)
}

// pooler is the FLOPs of the [CLS] MLP head on one sequence (pooling cls).
func (s encoderShape) pooler(pooling string) float64 {
	if transformer.Pooling(pooling) != transformer.PoolCLS {
		return 0
	}
	h := float64(s.Hidden)
	return 2 * h * h
}

// shape is the encoder a run of a would train: the init input's when
// connected (unknown, nil, while its stage has not run), hf_checkpoint's,
// else the architecture parameters'. The string says which.
func (a Architecture) shape(in registry.CostInputs) (*encoderShape, string, error) {
	dir, from := "", ""
	switch {
	case in.Connected["init"]:
		init, ok := in.Computed["init"]
		if !ok {
			return nil, "", nil
		}
		dir, from = init.Dir, "init"
	case a.HFCheckpoint != "":
		dir, from = a.HFCheckpoint, "hf_checkpoint"
	default:
		vocab := a.VocabSize
		if a.Vocab == VocabBERT {
			vocab = bertVocabSize
		}
		return &encoderShape{Layers: a.Layers, Hidden: a.Hidden, Intermediate: a.Intermediate, Vocab: vocab}, "architecture", nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", from, err)
	}
	var cfg transformer.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, "", fmt.Errorf("%s: config.json: %w", from, err)
	}
	return &encoderShape{Layers: cfg.Layers, Hidden: cfg.Hidden, Intermediate: cfg.Intermediate, Vocab: cfg.VocabSize}, from, nil
}

// countRows counts the rows of the JSONL file name in the computed input
// port (blank lines are not rows, as rows.Decode reads them), at most max
// when max > 0; false when the input is not computed yet.
func countRows(in registry.CostInputs, port, name string, max int) (int, bool, error) {
	a, ok := in.Computed[port]
	if !ok {
		return 0, false, nil
	}
	f, err := os.Open(a.Path(name))
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", port, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<28)
	n := 0
	for sc.Scan() && (max <= 0 || n < max) {
		if len(sc.Bytes()) > 0 {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, false, fmt.Errorf("%s: %w", port, err)
	}
	return n, true, nil
}

// estimate is the cost of a run of loop whose micro-batch example costs
// perExample forward FLOPs; examples counts the training examples (false:
// not computed yet; nil: not known before the run). An update is Accumulation micro-batches of BatchSize
// examples, as trainer.Config counts them (the epoch's last, short
// micro-batch kept); the backward pass is counted as twice the forward.
func (l LoopSpec) estimate(perExample float64, examples func() (int, bool, error), what string) (*registry.CostEstimate, error) {
	accum := max(l.Accumulation, 1)
	e := &registry.CostEstimate{FLOPsPerUpdate: 3 * perExample * float64(l.BatchSize*accum), Note: what}
	switch {
	case l.MaxSteps > 0:
		e.Updates = l.MaxSteps
	case examples == nil:
		e.Note += "; updates unknown before the run: an epoch's sequences depend on the data"
		return e, nil
	default:
		n, ok, err := examples()
		if err != nil {
			return nil, err
		}
		if !ok {
			e.Note += "; updates unknown: the data is not computed yet"
			return e, nil
		}
		micro := (n + l.BatchSize - 1) / l.BatchSize
		e.Updates = l.Epochs * ((micro + accum - 1) / accum)
	}
	if l.Patience > 0 {
		e.Note += "; at most (patience may stop it early)"
	}
	return e, nil
}

// contrastiveCost is the cost of a bi-encoder type that encodes views
// sequences of at most maxLength tokens per example through the shape of
// a, pooled by pooling.
func contrastiveCost(a Architecture, in registry.CostInputs, views, maxLength int, pooling string, l LoopSpec, examples func() (int, bool, error)) (*registry.CostEstimate, error) {
	s, from, err := a.shape(in)
	if s == nil || err != nil {
		return nil, err
	}
	per := float64(views) * (s.forward(maxLength) + s.pooler(pooling))
	return l.estimate(per, examples, fmt.Sprintf("%d x %d x %d encoder (%s), %d sequence(s) of %d tokens per example", s.Layers, s.Hidden, s.Intermediate, from, views, maxLength))
}

func simcseUnsupCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*SimCSEUnsupParams)
	return contrastiveCost(p.Architecture, in, 2, p.MaxLength, p.Pooling, p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps),
		func() (int, bool, error) { return countRows(in, "data", registry.FileSentences, p.MaxSentences) })
}

func simcseSupCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*SimCSESupParams)
	views := 2
	if p.HardNegatives {
		views = 3
	}
	return contrastiveCost(p.Architecture, in, views, p.MaxLength, p.Pooling, p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps),
		func() (int, bool, error) { return countRows(in, "data", registry.FileTriplets, p.MaxTriplets) })
}

func cosineCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*CosineParams)
	return contrastiveCost(p.Architecture, in, 2, p.MaxLength, p.Pooling, p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps),
		func() (int, bool, error) { return countRows(in, "data", registry.FilePairs, p.MaxPairs) })
}

// mlmCost: every sequence through the encoder, and the masked-LM head
// (dense H x H, decoder H x vocab) on the mask_probability share of its
// tokens that the loss scores. An epoch's sequences depend on the data
// (next_sentence pairs them), so without max_steps the updates are
// unknown.
func mlmCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*MLMParams)
	s, from, err := p.Architecture.shape(in)
	if s == nil || err != nil {
		return nil, err
	}
	h, v := float64(s.Hidden), float64(s.Vocab)
	per := s.forward(p.MaxLength) + p.MaskProbability*float64(p.MaxLength)*(2*h*h+2*h*v)
	what := fmt.Sprintf("%d x %d x %d encoder (%s), vocabulary %d, %d tokens per sequence", s.Layers, s.Hidden, s.Intermediate, from, s.Vocab, p.MaxLength)
	return p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).estimate(per, nil, what)
}
