package trainer

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
)

// pairTask is a tiny bi-encoder regression on the real stack (encoder,
// dropout from the trainer's generator, cosine-MSE loss, tensor.Backward):
// a sequence and a one-token edit of it score 1, unrelated pairs 0.
type pairTask struct {
	a, b   [][]int
	labels []float32
	enc    *transformer.Encoder
}

func newPairTask(t *testing.T) *pairTask {
	r := rand.New(rand.NewPCG(5, 5))
	task := &pairTask{}
	seq := func() []int {
		s := []int{2}
		for n := 3 + r.IntN(5); n > 0; n-- {
			s = append(s, 5+r.IntN(35))
		}
		return append(s, 3)
	}
	for i := 0; i < 48; i++ {
		a := seq()
		if i%2 == 0 {
			b := append([]int(nil), a...)
			b[1+r.IntN(len(b)-2)] = 5 + r.IntN(35)
			task.a, task.b, task.labels = append(task.a, a), append(task.b, b), append(task.labels, 1)
		} else {
			task.a, task.b, task.labels = append(task.a, a), append(task.b, seq()), append(task.labels, 0)
		}
	}
	c := transformer.Config{VocabSize: 40, Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPosition: 16,
		TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12}
	enc, err := transformer.NewEncoder(c, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	task.enc = enc
	return task
}

func (p *pairTask) loss(idx []int, rng *rand.Rand) (mat.Tensor, error) {
	var as, bs [][]int
	var ls []float32
	for _, i := range idx {
		as, bs, ls = append(as, p.a[i]), append(bs, p.b[i]), append(ls, p.labels[i])
	}
	emb := func(seqs [][]int) (mat.Tensor, error) {
		b, err := transformer.NewBatch(seqs, 0)
		if err != nil {
			return nil, err
		}
		o, err := p.enc.Forward(b, rng)
		if err != nil {
			return nil, err
		}
		return p.enc.Pool(o, transformer.PoolMean)
	}
	za, err := emb(as)
	if err != nil {
		return nil, err
	}
	zb, err := emb(bs)
	if err != nil {
		return nil, err
	}
	return loss.CosineMSE(za, zb, ls)
}

func (p *pairTask) fullLoss(t *testing.T) float32 {
	all := make([]int, len(p.a))
	for i := range all {
		all[i] = i
	}
	l, err := p.loss(all, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tensor.Data(l)[0]
}

func (p *pairTask) weights() [][]float32 {
	var w [][]float32
	for _, np := range p.enc.NamedParams() {
		w = append(w, append([]float32(nil), tensor.Data(np.Param)...))
	}
	return w
}

// TestTransformerResume trains the tiny encoder with the default
// (fixed-order) backward, checks the loss falls, and that a run crashed
// mid-way and resumed ends bit-identical to an uninterrupted one.
func TestTransformerResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a transformer three times")
	}
	c := Config{Epochs: 6, BatchSize: 8, LR: 3e-3, WarmupRatio: 0.1, MaxGradNorm: 1, WeightDecay: 0.01, CheckpointEvery: 5, Seed: 4}
	run := func(work string, crashAt int) (*pairTask, error) {
		task := newPairTask(t)
		c := c
		c.Work = work
		calls := 0
		tr := &Trainer{Params: FromNamed(task.enc.NamedParams()), N: len(task.a), Config: c,
			Step: func(_ context.Context, idx []int, rng *rand.Rand) (mat.Tensor, error) {
				if calls++; calls == crashAt {
					return nil, errors.New("simulated crash")
				}
				return task.loss(idx, rng)
			}}
		_, err := tr.Run(context.Background())
		return task, err
	}
	fresh := newPairTask(t)
	before := fresh.fullLoss(t)
	ref, err := run(t.TempDir(), -1)
	if err != nil {
		t.Fatal(err)
	}
	after := ref.fullLoss(t)
	if !(after < 0.7*before) {
		t.Fatalf("loss %g -> %g: did not fall", before, after)
	}
	t.Logf("cosine-MSE loss %.4f -> %.4f", before, after)
	work := t.TempDir()
	if _, err := run(work, 23); err == nil {
		t.Fatal("crash did not happen")
	}
	got, err := run(work, -1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.weights(), ref.weights()) {
		t.Fatal("resumed transformer weights differ from the uninterrupted run")
	}
}
