package trainer

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/tensor/backend"
)

// linRegFn is a fused autograd function: loss = mean((X w + b - y)^2) over
// the rows of one batch. One operator keeps the test independent of the
// operator library and makes ag.Backward deterministic.
type linRegFn struct {
	x, y []float32 // batch rows x d, batch
	d    int
	w, b *nn.Param
	res  []float32 // residuals, kept for Backward
}

func (f *linRegFn) Operands() []mat.Tensor { return []mat.Tensor{f.w, f.b} }

func (f *linRegFn) Forward() (mat.Tensor, error) {
	w := mat.Data[float32](f.w.Value())
	b := mat.Data[float32](f.b.Value())[0]
	n := len(f.y)
	f.res = make([]float32, n)
	var loss float32
	for i := 0; i < n; i++ {
		p := b
		for j := 0; j < f.d; j++ {
			p += f.x[i*f.d+j] * w[j]
		}
		f.res[i] = p - f.y[i]
		loss += f.res[i] * f.res[i]
	}
	return mat.Scalar(loss / float32(n)), nil
}

func (f *linRegFn) Backward(gy mat.Tensor) error {
	g := mat.Data[float32](gy)[0]
	n := len(f.y)
	gw := make([]float32, f.d)
	var gb float32
	for i := 0; i < n; i++ {
		r := 2 * f.res[i] / float32(n) * g
		for j := 0; j < f.d; j++ {
			gw[j] += r * f.x[i*f.d+j]
		}
		gb += r
	}
	f.w.AccGrad(mat.NewDense[float32](mat.WithShape(f.d, 1), mat.WithBacking(gw)))
	f.b.AccGrad(mat.Scalar(gb))
	return nil
}

// regression is a synthetic dataset y = X w* + 0.5 + noise.
type regression struct {
	x, y []float32
	d    int
	w, b *nn.Param
}

func newRegression(n, d int) *regression {
	r := rand.New(rand.NewPCG(7, 7))
	wstar := make([]float32, d)
	for j := range wstar {
		wstar[j] = float32(r.NormFloat64())
	}
	g := &regression{x: make([]float32, n*d), y: make([]float32, n), d: d}
	for i := 0; i < n; i++ {
		var s float32 = 0.5
		for j := 0; j < d; j++ {
			g.x[i*d+j] = float32(r.NormFloat64())
			s += g.x[i*d+j] * wstar[j]
		}
		g.y[i] = s + 0.01*float32(r.NormFloat64())
	}
	g.w = nn.NewParam(mat.NewDense[float32](mat.WithShape(d, 1)))
	g.b = nn.NewParam(mat.Scalar[float32](0))
	return g
}

func (g *regression) params() []Param {
	return []Param{{"linear.weight", g.w}, {"linear.bias", g.b}}
}

// step builds the loss of a batch; noise > 0 jitters the inputs with the
// trainer's generator, so resumption must restore it to be bit-identical.
func (g *regression) step(noise float32) StepFunc {
	return func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		x := make([]float32, len(batch)*g.d)
		y := make([]float32, len(batch))
		for k, i := range batch {
			copy(x[k*g.d:], g.x[i*g.d:(i+1)*g.d])
			y[k] = g.y[i]
			if noise > 0 {
				for j := 0; j < g.d; j++ {
					x[k*g.d+j] += noise * float32(rng.NormFloat64())
				}
			}
		}
		return ag.NewOperator(&linRegFn{x: x, y: y, d: g.d, w: g.w, b: g.b}).Run(), nil
	}
}

// fullLoss is the loss over the whole dataset (no noise).
func (g *regression) fullLoss() float64 {
	all := make([]int, len(g.y))
	for i := range all {
		all[i] = i
	}
	l, _ := g.step(0)(context.Background(), all, nil)
	return float64(mat.Data[float32](l.Value())[0])
}

func (g *regression) weights() []float32 {
	return append(append([]float32{}, mat.Data[float32](g.w.Value())...), mat.Data[float32](g.b.Value())...)
}

func trainer(g *regression, c Config) *Trainer {
	return &Trainer{Params: g.params(), N: len(g.y), Step: g.step(0.05), Config: c, Backward: func(l mat.Tensor) error { return ag.Backward(l) }}
}

func TestLossFalls(t *testing.T) {
	g := newRegression(200, 5)
	before := g.fullLoss()
	var losses []float64
	tr := trainer(g, Config{Epochs: 20, BatchSize: 16, LR: 0.05, WarmupRatio: 0.1, MaxGradNorm: 5, Seed: 1})
	tr.OnStep = func(p Progress) { losses = append(losses, p.Loss) }
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after := g.fullLoss()
	if res.Steps != 20*13 || len(losses) != res.Steps {
		t.Fatalf("steps %d, progress calls %d, want %d", res.Steps, len(losses), 20*13)
	}
	if !(after < before/100) {
		t.Fatalf("loss %g -> %g: did not fall 100x", before, after)
	}
	t.Logf("full-batch loss %.4f -> %.6f", before, after)
}

// TestAccumulation: 2 micro-batches of 4 make the same updates as batches of
// 8 (same data order, mean losses), to float32 rounding.
func TestAccumulation(t *testing.T) {
	g1, g2 := newRegression(64, 4), newRegression(64, 4)
	c := Config{Epochs: 3, LR: 0.02, Warmup: 2, MaxGradNorm: 1, Seed: 3}
	c1, c2 := c, c
	c1.BatchSize, c1.Accumulate = 4, 2
	c2.BatchSize = 8
	t1, t2 := trainer(g1, c1), trainer(g2, c2)
	t1.Step, t2.Step = g1.step(0), g2.step(0)
	r1, err := t1.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r2, err := t2.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r1.Steps != r2.Steps || r1.Steps != 24 {
		t.Fatalf("steps %d vs %d", r1.Steps, r2.Steps)
	}
	w1, w2 := g1.weights(), g2.weights()
	for i := range w1 {
		if math.Abs(float64(w1[i]-w2[i])) > 1e-5 {
			t.Fatalf("weight %d: accumulated %g, full batch %g", i, w1[i], w2[i])
		}
	}
	if reflect.DeepEqual(w1, newRegression(64, 4).weights()) {
		t.Fatal("weights did not change")
	}
}

// TestResume: a run interrupted after a checkpoint and resumed in a fresh
// trainer ends with exactly the weights and history of an uninterrupted run.
func TestResume(t *testing.T) {
	evalOf := func(g *regression) EvalFunc {
		return func(context.Context) (float64, error) { return -g.fullLoss(), nil }
	}
	c := Config{Epochs: 4, BatchSize: 8, Accumulate: 2, LR: 0.03, WarmupRatio: 0.2, MaxGradNorm: 2, WeightDecay: 0.01,
		EvalEvery: 5, CheckpointEvery: 3, Seed: 11}

	ref := newRegression(100, 3)
	c.Work = t.TempDir()
	tr := trainer(ref, c)
	tr.Eval = evalOf(ref)
	want, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	c.Work = t.TempDir()
	crashed := newRegression(100, 3)
	tr = trainer(crashed, c)
	tr.Eval = evalOf(crashed)
	calls := 0
	inner := tr.Step
	boom := errors.New("simulated crash")
	tr.Step = func(ctx context.Context, b []int, r *rand.Rand) (mat.Tensor, error) {
		if calls++; calls == 2*13+1 { // inside update 14, after the checkpoint at 12
			return nil, boom
		}
		return inner(ctx, b, r)
	}
	if _, err := tr.Run(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("crash run: %v", err)
	}
	resumed := newRegression(100, 3) // fresh weights: the state must overwrite them
	tr = trainer(resumed, c)
	tr.Eval = evalOf(resumed)
	got, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Resumed {
		t.Fatal("did not resume")
	}
	if !reflect.DeepEqual(resumed.weights(), ref.weights()) {
		t.Fatalf("resumed weights %v differ from uninterrupted %v", resumed.weights(), ref.weights())
	}
	if !reflect.DeepEqual(got.History, want.History) || got.BestStep != want.BestStep || got.Steps != want.Steps {
		t.Fatalf("history %+v vs %+v", got, want)
	}
	// A finished state resumes to the end at once with the same weights.
	again := newRegression(100, 3)
	tr = trainer(again, c)
	tr.Step = func(context.Context, []int, *rand.Rand) (mat.Tensor, error) {
		t.Fatal("step after done")
		return nil, nil
	}
	if _, err := tr.Run(context.Background()); err != nil || !reflect.DeepEqual(again.weights(), ref.weights()) {
		t.Fatalf("rerun of finished state: %v", err)
	}
	// Another configuration refuses the state.
	c.LR = 0.5
	tr = trainer(newRegression(100, 3), c)
	var mismatch *StateMismatchError
	if _, err := tr.Run(context.Background()); !errors.As(err, &mismatch) {
		t.Fatalf("config change: %v", err)
	}
}

func TestNaNLoss(t *testing.T) {
	g := newRegression(40, 2)
	tr := trainer(g, Config{Epochs: 2, BatchSize: 4, LR: 0.1, Seed: 1})
	inner := tr.Step
	n := 0
	tr.Step = func(ctx context.Context, b []int, r *rand.Rand) (mat.Tensor, error) {
		if n++; n == 3 {
			return mat.Scalar(float32(math.NaN())), nil
		}
		return inner(ctx, b, r)
	}
	_, err := tr.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "step 3") || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("err = %v", err)
	}
}

// TestEarlyStoppingKeepsBest: the metric peaks at the 2nd evaluation, so
// with patience 2 training stops at the 4th and restores the 2nd's weights.
func TestEarlyStoppingKeepsBest(t *testing.T) {
	g := newRegression(64, 2)
	metrics := []float64{0.1, 0.5, 0.3, 0.2, 0.9, 0.9}
	var atBest []float32
	k := 0
	tr := trainer(g, Config{Epochs: 10, BatchSize: 8, LR: 0.05, EvalEvery: 2, Patience: 2, Seed: 2})
	tr.Eval = func(context.Context) (float64, error) {
		m := metrics[k]
		if k == 1 {
			atBest = g.weights()
		}
		k++
		return m, nil
	}
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.Steps != 8 || res.BestStep != 4 || res.BestMetric != 0.5 || len(res.History) != 4 {
		t.Fatalf("result %+v", res)
	}
	if !reflect.DeepEqual(g.weights(), atBest) {
		t.Fatal("best weights not restored")
	}
}

func TestConfigErrors(t *testing.T) {
	g := newRegression(10, 2)
	for _, c := range []Config{{LR: 0.1}, {BatchSize: 2}, {BatchSize: 2, LR: 0.1, WarmupRatio: 1.5}, {BatchSize: 20, LR: 0.1, DropLast: true}} {
		if _, err := trainer(g, c).Run(context.Background()); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
	tr := trainer(g, Config{BatchSize: 2, LR: 0.1})
	tr.Params = append(tr.Params, tr.Params[0])
	if _, err := tr.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate param: %v", err)
	}
}

// residentRecorder is the CPU backend with backend.Resident's bookkeeping:
// it records what a device backend would hold and checks that a training
// run keeps every weight for the run, refreshes the restored best weights
// and releases everything at the end.
type residentRecorder struct {
	backend.Backend
	kept    map[*float32]int
	changed int
	log     []string
}

func (r *residentRecorder) Keep(x []float32) { r.kept[&x[0]] = len(x); r.log = append(r.log, "keep") }
func (r *residentRecorder) Changed(x []float32) {
	if _, ok := r.kept[&x[0]]; !ok {
		r.log = append(r.log, "changed a slice that is not kept")
	}
	r.changed++
}
func (r *residentRecorder) Release(x []float32) { delete(r.kept, &x[0]) }

func TestWeightsResidentDuringRun(t *testing.T) {
	g := newRegression(64, 2)
	rec := &residentRecorder{Backend: backend.CPU(), kept: map[*float32]int{}}
	defer backend.Use(backend.Current())
	backend.Use(rec)
	metrics := []float64{0.5, 0.1, 0.2}
	k := 0
	tr := trainer(g, Config{Epochs: 3, BatchSize: 16, LR: 0.05, EvalEvery: 4, Seed: 3})
	n := len(tr.Params)
	var keptDuring int
	tr.Eval = func(context.Context) (float64, error) {
		keptDuring = len(rec.kept)
		m := metrics[k%len(metrics)]
		k++
		return m, nil
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if keptDuring != n {
		t.Errorf("%d of %d weights kept on the device during the run", keptDuring, n)
	}
	if len(rec.kept) != 0 {
		t.Errorf("%d weights still kept after the run", len(rec.kept))
	}
	if rec.changed != n {
		t.Errorf("restoring the best weights refreshed %d device copies, want %d", rec.changed, n)
	}
	for _, l := range rec.log {
		if l != "keep" {
			t.Error(l)
		}
	}
}
