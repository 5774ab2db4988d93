package pooled

import (
	"context"
	"fmt"
	"math"
	"strings"

	"repro/internal/encoder"
	"repro/internal/metrics"
	"repro/internal/rows"
)

// DevSet is a set of gold-scored pairs prepared for repeated evaluation
// during training: the distinct sentences are collected once, and each
// evaluation encodes them once.
type DevSet struct {
	sentences   []string
	left, right []int
	gold        []float64
	tasks       [][]int // pair indices per task, in order of first appearance
}

// NewDevSet prepares STS pairs (normally STS-B dev). Sentences are
// whitespace-normalised as the STS evaluation does; an empty sentence or a
// non-finite score is an error naming the pair. Pairs of several tasks
// (their Task field) are scored per task and averaged: SynCSE selects
// models by the mean of STS-B dev and SICK-R dev, which is not the
// Spearman of the two sets pooled.
func NewDevSet(pairs []rows.STSPair) (*DevSet, error) {
	if len(pairs) < 2 {
		return nil, fmt.Errorf("encoder: dev set: %d pairs, need at least 2", len(pairs))
	}
	d := &DevSet{left: make([]int, len(pairs)), right: make([]int, len(pairs)), gold: make([]float64, len(pairs))}
	index := map[string]int{}
	task := map[string]int{}
	add := func(s string) int {
		s = strings.Join(strings.Fields(s), " ")
		i, ok := index[s]
		if !ok {
			i = len(d.sentences)
			index[s] = i
			d.sentences = append(d.sentences, s)
		}
		return i
	}
	for i, p := range pairs {
		if strings.TrimSpace(p.Sentence1) == "" || strings.TrimSpace(p.Sentence2) == "" {
			return nil, fmt.Errorf("encoder: dev set: pair %d has an empty sentence", i+1)
		}
		if math.IsNaN(p.Score) || math.IsInf(p.Score, 0) {
			return nil, fmt.Errorf("encoder: dev set: pair %d has score %v", i+1, p.Score)
		}
		d.left[i], d.right[i], d.gold[i] = add(p.Sentence1), add(p.Sentence2), p.Score
		t, ok := task[p.Task]
		if !ok {
			t = len(d.tasks)
			task[p.Task] = t
			d.tasks = append(d.tasks, nil)
		}
		d.tasks[t] = append(d.tasks[t], i)
	}
	for t, idx := range d.tasks {
		if len(idx) < 2 {
			return nil, fmt.Errorf("encoder: dev set: task %d has %d pair, need at least 2", t+1, len(idx))
		}
	}
	return d, nil
}

// Spearman encodes the pairs with enc and returns Spearman's correlation x
// 100 between the cosine of each pair's vectors and its gold score (the
// STS-B dev model-selection metric); with several tasks, the mean of the
// per-task correlations. A collapsed encoder (every cosine equal) gives 0,
// not NaN: it is a legitimate, bad, model.
func (d *DevSet) Spearman(ctx context.Context, enc encoder.Encoder) (float64, error) {
	vs, err := enc.Encode(ctx, d.sentences)
	if err != nil {
		return 0, err
	}
	if len(vs) != len(d.sentences) {
		return 0, fmt.Errorf("encoder: dev set: encoder returned %d vectors for %d sentences", len(vs), len(d.sentences))
	}
	sys := make([]float64, len(d.gold))
	for i := range sys {
		sys[i] = metrics.Cosine(vs[d.left[i]], vs[d.right[i]])
		if math.IsNaN(sys[i]) {
			return 0, fmt.Errorf("encoder: dev set: pair %d: the encoder produced a vector that is not finite", i+1)
		}
	}
	if len(d.tasks) == 1 {
		return spearman100(sys, d.gold), nil
	}
	sum := 0.0
	for _, idx := range d.tasks {
		xs, ys := make([]float64, len(idx)), make([]float64, len(idx))
		for k, i := range idx {
			xs[k], ys[k] = sys[i], d.gold[i]
		}
		sum += spearman100(xs, ys)
	}
	return sum / float64(len(d.tasks)), nil
}

func spearman100(sys, gold []float64) float64 {
	r := metrics.Spearman(sys, gold)
	if math.IsNaN(r) {
		return 0
	}
	return 100 * r
}
