// Package trainer is the training loop every training stage shares: batches
// drawn from a seeded shuffle, a stage-supplied step function that builds
// the loss graph, gradient accumulation, clipping by global norm, AdamW
// with linear warm-up and decay, periodic evaluation with keep-best and
// early stopping, progress reports, and crash-safe resumption.
//
// Design choices:
//
//   - The trainer knows nothing about models or data: a dataset is N
//     examples, a batch is a slice of example indices, and the stage's Step
//     turns indices into a scalar loss node. Parameters are (name, *nn.Param)
//     pairs, the names being the Hugging Face names models expose.
//   - Determinism: the data order comes from a PCG generator seeded from
//     Config.Seed, Step gets its own PCG generator for dropout and
//     sampling, gradients are summed by internal/tensor's fixed-order
//     Backward, and the optimizer and clipping run in parameter order; the
//     same seed gives bit-identical weights.
//   - Resumption: every CheckpointEvery updates (and at every evaluation)
//     the whole state -- weights, AdamW moments, step, both generators,
//     epoch position, best weights and metric, evaluation history -- goes
//     into ONE safetensors file (Work/train_state.safetensors, scalars in
//     its metadata) written atomically (temp file, fsync, rename). One file
//     means no torn combination of weights and counters after a crash. On
//     start, Run resumes from it when present; the continuation is
//     bit-identical to an uninterrupted run. A state from a different
//     configuration (fingerprint mismatch) is an error, not a silent
//     restart.
//   - Drive (driver.go) runs a Recipe -- parameters, step, evaluation,
//     per-update journal records -- with progress and log lines; the
//     families' recipes (internal/mlm, clm, seq2seq, contrastive) build
//     one, so a training stage is parameter decoding plus one call.
//   - On a backend with a device (cuda, the emulated "emu") the parameters
//     and AdamW moments stay in device memory for the whole run and only
//     the batch and the logged scalars cross per update (device.go); the
//     arithmetic is the host's, so the emulated device ends with the CPU's
//     weights bit for bit.
//   - The loss of micro-batch i is its own graph; gradients of an
//     accumulated step are summed across micro-batches and divided by their
//     count, which equals the gradient of the mean loss over the combined
//     batch when the loss is a per-example mean and micro-batches are equal.
package trainer

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/optim"
)

// Param is a named trainable parameter.
type Param struct {
	Name  string
	Param *nn.Param
}

// Config holds the hyperparameters. Zero values take the defaults noted.
type Config struct {
	// Epochs over the dataset (default 1). MaxSteps > 0 overrides it as
	// the number of optimizer updates (cycling epochs as needed).
	Epochs   int
	MaxSteps int
	// BatchSize examples per micro-batch (required).
	BatchSize int
	// Accumulate micro-batches per optimizer update (default 1).
	Accumulate int
	// DropLast drops an epoch's final short micro-batch.
	DropLast bool
	// NoShuffle keeps dataset order (still deterministic).
	NoShuffle bool

	LR float64 // peak learning rate (required)
	// Warmup updates; WarmupRatio (of the total) is used when Warmup is 0.
	Warmup      int
	WarmupRatio float64
	// ConstantLR disables warm-up and decay.
	ConstantLR bool

	WeightDecay float64 // default 0 (HF Trainer's default)
	// NoDecay says which parameters get no weight decay; default: biases
	// and LayerNorm weights (the HF/BERT convention).
	NoDecay           func(name string) bool
	Beta1, Beta2, Eps float64 // defaults 0.9, 0.999, 1e-8 (torch AdamW)
	MaxGradNorm       float64 // 0: no clipping

	// EvalEvery updates between evaluations (0: at the end of each epoch);
	// the final update is always evaluated. Patience: stop after this many
	// evaluations without improvement (0: never).
	EvalEvery int
	Patience  int
	// KeepLast keeps the final weights instead of restoring the best.
	KeepLast bool

	// Work is the directory for the resumable state ("" disables it).
	Work string
	// CheckpointEvery updates between state snapshots; snapshots are also
	// taken at every evaluation and epoch end. A snapshot holds weights,
	// both AdamW moments and the best weights: 4x the model's size.
	CheckpointEvery int
	// CheckpointInterval also takes a snapshot after the first update
	// that ends this long after the last snapshot (0: never), so that a
	// run killed outright (a time limit's SIGKILL, a crash) loses little.
	// Snapshots never change what a run computes.
	CheckpointInterval time.Duration

	Seed uint64

	// Precision is the arithmetic of the GEMMs (backend.Precision): FP32,
	// the default and the reference, or mixed precision (TF32, or BF16
	// with the FP32 weights as the master copy and AdamW in FP32), which
	// needs a device backend (emu, cuda): the run fails before its first
	// update elsewhere, or with a custom Backward.
	Precision backend.Precision
}

// StepFunc computes the loss of one micro-batch (indices into the dataset)
// and returns the scalar loss node. rng is the trainer's generator for
// dropout and sampling; use no other source of randomness. The trainer
// releases the loss's graph after its backward pass (tensor.Release): a
// step function must keep no value of it for later.
type StepFunc func(ctx context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error)

// EvalFunc returns the model-selection metric; higher is better.
type EvalFunc func(ctx context.Context) (float64, error)

// Progress is reported after every optimizer update.
type Progress struct {
	Step, Total int
	Epoch       int
	Loss        float64 // mean micro-batch loss of this update
	LR          float64
	GradNorm    float64 // before clipping
	Metric      float64 // latest evaluation (NaN before the first)
	Best        float64 // best evaluation so far (NaN before the first)
	Evaluated   bool    // whether this update ran an evaluation
	Elapsed     time.Duration
	ETA         time.Duration
	// OnDevice says the run trains on a device (device.go); CopiedUp and
	// CopiedDown are the bytes this update copied to and from it.
	OnDevice             bool
	CopiedUp, CopiedDown int64
}

// Eval is one evaluation.
type Eval struct {
	Step   int     `json:"step"`
	Metric float64 `json:"metric"`
}

// Result summarises a run.
type Result struct {
	Steps      int     // optimizer updates made in total
	BestStep   int     // update whose weights were kept (-1: no evaluation)
	BestMetric float64 // NaN without evaluation
	Stopped    bool    // early stopping fired
	Resumed    bool    // started from a saved state
	LastLoss   float64
	History    []Eval
	// Records are the recipe's journal, in update order (Drive only).
	Records []json.RawMessage
	// Device is what a run on a device copied (nil on the host).
	Device *DeviceReport
}

// Trainer runs training. Params, Step and N are required.
type Trainer struct {
	Params []Param
	N      int // dataset size
	Step   StepFunc
	Eval   EvalFunc         // optional
	OnStep func(p Progress) // optional progress callback
	Config Config
	// Backward back-propagates from the loss (default tensor.Backward,
	// the fixed-order one; tests of graphs built from other operators
	// set ag.Backward).
	Backward func(mat.Tensor) error
	// OnStart, when set, is called once the saved state (if any) is
	// loaded, with the number of updates already made (0 for a fresh
	// run): records kept beside the state (Journal) drop what the run
	// will redo. OnSave is called before each state snapshot: such
	// records reach the disk before the state that counts them.
	OnStart func(step int) error
	OnSave  func() error

	now func() time.Time // the clock of timed snapshots (tests set it)
}

// DefaultNoDecay exempts biases and LayerNorm weights from weight decay.
func DefaultNoDecay(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, "bias") || strings.Contains(n, "layernorm") || strings.Contains(n, "layer_norm") || strings.Contains(n, "ln_")
}

func (c *Config) defaults() error {
	if c.Epochs <= 0 {
		c.Epochs = 1
	}
	if c.Accumulate <= 0 {
		c.Accumulate = 1
	}
	if c.Beta1 == 0 {
		c.Beta1 = 0.9
	}
	if c.Beta2 == 0 {
		c.Beta2 = 0.999
	}
	if c.Eps == 0 {
		c.Eps = 1e-8
	}
	if c.NoDecay == nil {
		c.NoDecay = DefaultNoDecay
	}
	switch {
	case c.BatchSize <= 0:
		return fmt.Errorf("train: batch size %d must be positive", c.BatchSize)
	case !(c.LR > 0):
		return fmt.Errorf("train: learning rate %g must be positive", c.LR)
	case c.WarmupRatio < 0 || c.WarmupRatio >= 1:
		return fmt.Errorf("train: warmup ratio %g must be in [0, 1)", c.WarmupRatio)
	case c.Warmup < 0 || c.MaxSteps < 0 || c.EvalEvery < 0 || c.Patience < 0 || c.CheckpointEvery < 0:
		return fmt.Errorf("train: warmup, max steps, eval every, patience and checkpoint every must not be negative")
	case c.Beta1 < 0 || c.Beta1 >= 1 || c.Beta2 < 0 || c.Beta2 >= 1:
		return fmt.Errorf("train: AdamW betas (%g, %g) must be in [0, 1)", c.Beta1, c.Beta2)
	case c.WeightDecay < 0 || c.MaxGradNorm < 0:
		return fmt.Errorf("train: weight decay and max grad norm must not be negative")
	}
	return nil
}

// plan is the derived geometry of a run.
type plan struct {
	microPerEpoch int // micro-batches per epoch
	stepsPerEpoch int // optimizer updates per epoch
	total         int // optimizer updates in all
	warmup        int
}

func (t *Trainer) plan() (plan, error) {
	c := t.Config
	var p plan
	if c.DropLast {
		p.microPerEpoch = t.N / c.BatchSize
	} else {
		p.microPerEpoch = (t.N + c.BatchSize - 1) / c.BatchSize
	}
	if p.microPerEpoch == 0 {
		return p, fmt.Errorf("train: dataset of %d examples gives no batch of %d", t.N, c.BatchSize)
	}
	p.stepsPerEpoch = (p.microPerEpoch + c.Accumulate - 1) / c.Accumulate
	p.total = c.Epochs * p.stepsPerEpoch
	if c.MaxSteps > 0 {
		p.total = c.MaxSteps
	}
	p.warmup = c.Warmup
	if p.warmup == 0 && c.WarmupRatio > 0 {
		p.warmup = int(math.Ceil(c.WarmupRatio * float64(p.total)))
	}
	return p, nil
}

// fingerprint identifies what a saved state is valid for.
func (t *Trainer) fingerprint(p plan) string {
	c := t.Config
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d bs=%d acc=%d drop=%v shuf=%v total=%d warm=%d const=%v lr=%g wd=%g b=%g,%g,%g clip=%g eval=%d pat=%d seed=%d",
		t.N, c.BatchSize, c.Accumulate, c.DropLast, !c.NoShuffle, p.total, p.warmup, c.ConstantLR, c.LR, c.WeightDecay, c.Beta1, c.Beta2, c.Eps, c.MaxGradNorm, c.EvalEvery, c.Patience, c.Seed)
	for _, pr := range t.Params {
		fmt.Fprintf(&b, " %s%v", pr.Name, pr.Param.Shape())
	}
	if c.Precision != backend.FP32 { // FP32 runs keep their fingerprints
		fmt.Fprintf(&b, " precision=%v", c.Precision)
	}
	return b.String()
}

// state is everything that changes during a run.
type state struct {
	Step        int      `json:"step"`  // updates done
	Epoch       int      `json:"epoch"` // current epoch (0-based)
	Micro       int      `json:"micro"` // micro-batches of this epoch consumed
	EpochRNG    []byte   `json:"epoch_rng"`
	StepRNG     []byte   `json:"step_rng"`
	BestMetric  float64  `json:"-"`
	BestJSON    *float64 `json:"best_metric"` // JSON has no NaN
	BestStep    int      `json:"best_step"`
	SinceBest   int      `json:"since_best"`
	Stopped     bool     `json:"stopped"`
	Done        bool     `json:"done"`
	LastLoss    float64  `json:"last_loss"`
	LastMetric  *float64 `json:"last_metric"`
	History     []Eval   `json:"history"`
	AdamT       []int    `json:"adam_t"`
	Fingerprint string   `json:"fingerprint"`
}

// values returns the parameters' value slices (aliases, not copies).
func (t *Trainer) values() [][]float32 {
	out := make([][]float32, len(t.Params))
	for i, p := range t.Params {
		out[i] = mat.Data[float32](p.Param.Value())
	}
	return out
}

// Run trains and returns a summary. The parameters end holding the best
// evaluated weights (or the last ones with KeepLast or without Eval).
func (t *Trainer) Run(ctx context.Context) (*Result, error) {
	r, err := t.start()
	if err != nil {
		return nil, err
	}
	defer r.release()
	if t.OnStart != nil {
		if err := t.OnStart(r.st.Step); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	if r.st.Done {
		r.leaveDevice()
		return r.finish(), nil
	}
	for r.st.Step < r.pl.total {
		if err := ctx.Err(); err != nil {
			if serr := r.save(); serr != nil {
				return nil, serr
			}
			return nil, err
		}
		lr, norm, err := r.update(ctx)
		if err != nil {
			return nil, err
		}
		evaluated, err := r.evaluate(ctx)
		if err != nil {
			return nil, err
		}
		r.report(lr, norm, evaluated)
		if r.st.Stopped || r.st.Step == r.pl.total {
			break
		}
		if r.snapshotDue(evaluated) {
			if err := r.save(); err != nil {
				return nil, err
			}
		}
	}
	r.st.Done = true
	r.leaveDevice()
	if err := r.save(); err != nil {
		return nil, err
	}
	return r.finish(), nil
}

// run is one Run's working set: the optimizer, both generators, the state
// that a snapshot saves, and the current epoch's order.
type run struct {
	t        *Trainer
	c        Config
	pl       plan
	backward func(mat.Tensor) error
	params   [][]float32 // the parameters' values (aliases)
	decay    []float64
	grads    [][]float32
	opt      *optim.AdamW
	epochSrc *rand.PCG
	stepSrc  *rand.PCG
	stepRNG  *rand.Rand
	st       state
	best     [][]float32
	order    []int // the current epoch's permutation
	res      *Result

	lastMetric float64
	start      time.Time
	startStep  int
	// lastSave and saveCost pace the timed snapshots (CheckpointInterval).
	lastSave time.Time
	saveCost time.Duration
	now      func() time.Time
	release  func()
	// dev is the device the run trains on (device.go); nil on the host.
	dev *onDevice
}

// check refuses a Trainer that cannot run.
func (t *Trainer) check() error {
	if err := t.Config.defaults(); err != nil {
		return err
	}
	if t.Step == nil || len(t.Params) == 0 || t.N <= 0 {
		return fmt.Errorf("train: Step, Params and a positive N are required (N = %d, %d params)", t.N, len(t.Params))
	}
	seen := map[string]bool{}
	for _, p := range t.Params {
		if p.Param == nil {
			return fmt.Errorf("train: parameter %q is nil", p.Name)
		}
		if seen[p.Name] {
			return fmt.Errorf("train: parameter name %q appears twice", p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

// start checks t, builds the optimizer and generators, resumes from a
// saved state when there is one and draws the current epoch's order.
func (t *Trainer) start() (*run, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	r := &run{t: t, c: t.Config, backward: t.Backward, release: func() {}}
	if r.backward == nil {
		r.backward = tensor.Backward
	}
	var err error
	if r.pl, err = t.plan(); err != nil {
		return nil, err
	}
	fp := t.fingerprint(r.pl)
	r.params = t.values()
	sizes := make([]int, len(r.params))
	r.decay = make([]float64, len(r.params))
	for i, p := range r.params {
		sizes[i] = len(p)
		if !r.c.NoDecay(t.Params[i].Name) {
			r.decay[i] = r.c.WeightDecay
		}
	}
	if r.opt, err = optim.NewAdamW(sizes, r.c.Beta1, r.c.Beta2, r.c.Eps); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	r.grads = make([][]float32, len(r.params))
	r.epochSrc = rand.NewPCG(r.c.Seed, 0x5eed0001)
	r.stepSrc = rand.NewPCG(r.c.Seed, 0x5eed0002)
	r.st = state{BestMetric: math.NaN(), BestStep: -1, Fingerprint: fp}
	r.res = &Result{}
	if err := r.resume(fp); err != nil {
		return nil, err
	}
	r.stepRNG = rand.New(r.stepSrc)
	if r.placeOnDevice() {
		r.release = r.leaveDevice
	} else if r.c.Precision != backend.FP32 {
		why := fmt.Sprintf("the %s backend has no device", backend.Current().Name())
		if t.Backward != nil {
			why = "this training type computes its own gradients on the host"
		}
		return nil, fmt.Errorf("train: precision %v needs the device path (--backend emu or cuda): %s; fp32 is the default", r.c.Precision, why)
	} else {
		r.keepResident()
	}
	if r.res.Resumed {
		// Re-derive the permutation from the saved epoch-start state.
		saved := rand.NewPCG(0, 0)
		if err := saved.UnmarshalBinary(r.st.EpochRNG); err != nil {
			r.release()
			return nil, err
		}
		r.epochSrc = saved
	}
	if err := r.newEpoch(); err != nil {
		r.release()
		return nil, err
	}
	r.lastMetric = math.NaN()
	if r.st.LastMetric != nil {
		r.lastMetric = *r.st.LastMetric
	}
	r.now = t.now
	if r.now == nil {
		r.now = time.Now
	}
	r.start = r.now()
	r.lastSave = r.start
	r.startStep = r.st.Step
	return r, nil
}

// resume loads the saved state of Config.Work, if any, into r.
func (r *run) resume(fp string) error {
	if r.c.Work == "" {
		return nil
	}
	loaded, lbest, err := r.t.load(fp, r.params, r.opt)
	if err != nil || loaded == nil {
		return err
	}
	r.st = *loaded
	r.best = lbest
	r.res.Resumed = true
	if err := r.epochSrc.UnmarshalBinary(r.st.EpochRNG); err != nil {
		return fmt.Errorf("train: resume from %s: epoch generator: %v", r.t.statePath(), err)
	}
	if err := r.stepSrc.UnmarshalBinary(r.st.StepRNG); err != nil {
		return fmt.Errorf("train: resume from %s: step generator: %v", r.t.statePath(), err)
	}
	return nil
}

// keepResident: on a backend with its own memory (CUDA) the weights stay
// there for the whole run: every GEMM reads the device copy, and AdamW
// updates it in place (and the host copy the CPU-side operators read).
func (r *run) keepResident() {
	res, ok := backend.Current().(backend.Resident)
	if !ok {
		return
	}
	for _, p := range r.params {
		res.Keep(p)
	}
	r.release = func() {
		for _, p := range r.params {
			res.Release(p)
		}
	}
}

// newEpoch draws the epoch's permutation from a copy of the epoch
// generator as of the epoch's start, so a resume redraws it.
func (r *run) newEpoch() error {
	b, err := r.epochSrc.MarshalBinary()
	if err != nil {
		return err
	}
	r.st.EpochRNG = b
	r.order = make([]int, r.t.N)
	for i := range r.order {
		r.order[i] = i
	}
	if !r.c.NoShuffle {
		rand.New(r.epochSrc).Shuffle(len(r.order), func(i, j int) { r.order[i], r.order[j] = r.order[j], r.order[i] })
	}
	return nil
}

// update makes one optimizer update: up to Accumulate micro-batches, not
// crossing an epoch boundary (as HF's loop). It returns the learning rate
// and the gradient norm before clipping.
func (r *run) update(ctx context.Context) (lr, norm float64, err error) {
	st, c := &r.st, r.c
	if r.dev != nil {
		r.dev.beginUpdate()
	}
	lossSum, micro := 0.0, 0
	for micro < c.Accumulate && st.Micro < r.pl.microPerEpoch {
		lo := st.Micro * c.BatchSize
		hi := min(lo+c.BatchSize, r.t.N)
		lv, err := r.micro(ctx, r.order[lo:hi])
		if err != nil {
			return 0, 0, err
		}
		lossSum += lv
		micro++
		st.Micro++
	}
	if r.dev != nil {
		norm = r.dev.gradients(micro, c.MaxGradNorm)
	} else {
		for i, p := range r.t.Params {
			if p.Param.HasGrad() {
				r.grads[i] = mat.Data[float32](p.Param.Grad())
				if micro > 1 {
					s := 1 / float32(micro)
					for j := range r.grads[i] {
						r.grads[i][j] *= s
					}
				}
			} else {
				r.grads[i] = nil // unused this step: AdamW skips it
			}
		}
		norm = optim.ClipGradNorm(r.grads, c.MaxGradNorm)
	}
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return 0, 0, fmt.Errorf("train: step %d: gradient norm is %v", st.Step+1, norm)
	}
	lr = c.LR
	if !c.ConstantLR {
		lr *= optim.LinearSchedule(st.Step, r.pl.warmup, r.pl.total)
	}
	if r.dev != nil {
		r.dev.step(r.opt, lr, r.decay)
		r.dev.endUpdate()
	} else {
		r.opt.Step(r.params, r.grads, lr, r.decay)
		// Nothing reads the gradients after AdamW (clipping and the
		// micro-batch average ran above on r.grads, which aliases them):
		// their buffers go back to the free lists for the next update's
		// backward instead of to the garbage collector.
		for i, p := range r.t.Params {
			r.grads[i] = nil
			tensor.ReleaseGrad(p.Param)
		}
	}
	st.Step++
	st.LastLoss = lossSum / float64(micro)
	if st.Micro >= r.pl.microPerEpoch {
		st.Epoch++
		st.Micro = 0
		if err := r.newEpoch(); err != nil {
			return 0, 0, err
		}
	}
	return lr, norm, nil
}

// micro runs one micro-batch forward and backward; it returns its loss.
func (r *run) micro(ctx context.Context, batch []int) (float64, error) {
	st := &r.st
	loss, err := r.t.Step(ctx, batch, r.stepRNG)
	if err != nil {
		return 0, fmt.Errorf("train: step %d: %w", st.Step+1, err)
	}
	if loss == nil || loss.Size() != 1 {
		return 0, fmt.Errorf("train: step %d: the step function must return a scalar loss", st.Step+1)
	}
	lv := float64(mat.Data[float32](loss.Value())[0])
	if math.IsNaN(lv) || math.IsInf(lv, 0) {
		return 0, fmt.Errorf("train: step %d (epoch %d, micro-batch %d): loss is %v", st.Step+1, st.Epoch+1, st.Micro+1, lv)
	}
	if err := r.backward(loss); err != nil {
		return 0, fmt.Errorf("train: step %d: backward: %w", st.Step+1, err)
	}
	// The micro-batch's graph is done with: its gradients are in the
	// parameters (leaves, which Release leaves alone) and no step function
	// keeps a value of its graph, so its activations and scratch serve
	// the next micro-batch instead of the garbage collector.
	tensor.Release(loss)
	return lv, nil
}

// evaluate runs the evaluation when one is due after this update, keeps
// the best weights and decides early stopping; it says whether it ran.
func (r *run) evaluate(ctx context.Context) (bool, error) {
	st, c := &r.st, r.c
	due := r.t.Eval != nil && (st.Step == r.pl.total ||
		(c.EvalEvery > 0 && st.Step%c.EvalEvery == 0) ||
		(c.EvalEvery == 0 && st.Micro == 0))
	if !due {
		return false, nil
	}
	if r.dev != nil {
		// The evaluation runs on the host, on the current weights (and
		// keepBest copies them).
		r.dev.suspend()
		defer r.dev.resume()
	}
	m, err := r.t.Eval(ctx)
	if err != nil {
		return false, fmt.Errorf("train: evaluation after step %d: %w", st.Step, err)
	}
	if math.IsNaN(m) {
		return false, fmt.Errorf("train: evaluation after step %d returned NaN", st.Step)
	}
	r.lastMetric = m
	st.LastMetric = &m
	st.History = append(st.History, Eval{Step: st.Step, Metric: m})
	if math.IsNaN(st.BestMetric) || m > st.BestMetric {
		st.BestMetric, st.BestStep, st.SinceBest = m, st.Step, 0
		r.keepBest()
	} else {
		st.SinceBest++
		if c.Patience > 0 && st.SinceBest >= c.Patience {
			st.Stopped = true
		}
	}
	return true, nil
}

// keepBest copies the current weights as the best ones.
func (r *run) keepBest() {
	if r.best == nil {
		r.best = make([][]float32, len(r.params))
		for i, p := range r.params {
			r.best[i] = make([]float32, len(p))
		}
	}
	for i, p := range r.params {
		copy(r.best[i], p)
	}
}

// report calls OnStep with this update's progress.
func (r *run) report(lr, norm float64, evaluated bool) {
	if r.t.OnStep == nil {
		return
	}
	st := &r.st
	el := r.now().Sub(r.start)
	done := st.Step - r.startStep
	eta := time.Duration(float64(el) / float64(done) * float64(r.pl.total-st.Step))
	p := Progress{Step: st.Step, Total: r.pl.total, Epoch: st.Epoch, Loss: st.LastLoss, LR: lr, GradNorm: norm,
		Metric: r.lastMetric, Best: st.BestMetric, Evaluated: evaluated, Elapsed: el, ETA: eta}
	if r.dev != nil {
		p.OnDevice, p.CopiedUp, p.CopiedDown = true, r.dev.last.UpBytes, r.dev.last.DownBytes
	}
	r.t.OnStep(p)
}

// snapshotDue says whether to save the state after this update: at every
// evaluation and epoch end, every CheckpointEvery updates, and once
// CheckpointInterval has passed since the last snapshot -- or twenty times
// the last snapshot's duration, whichever is longer, so that saving a
// large model costs at most about 5% of the run.
func (r *run) snapshotDue(evaluated bool) bool {
	c := r.c
	if evaluated || r.st.Micro == 0 || (c.CheckpointEvery > 0 && r.st.Step%c.CheckpointEvery == 0) {
		return true
	}
	return c.CheckpointInterval > 0 && r.now().Sub(r.lastSave) >= max(c.CheckpointInterval, 20*r.saveCost)
}

// save writes the state snapshot (nothing without Config.Work).
func (r *run) save() error {
	if r.c.Work == "" {
		return nil
	}
	began := r.now()
	if r.t.OnSave != nil {
		if err := r.t.OnSave(); err != nil {
			return fmt.Errorf("train: save state: %w", err)
		}
	}
	if r.dev != nil && r.dev.moments != nil {
		r.dev.sync(r.opt) // the host's weights and moments are the device's
	}
	b, err := r.stepSrc.MarshalBinary()
	if err != nil {
		return err
	}
	r.st.StepRNG = b
	r.st.AdamT = append([]int(nil), r.opt.T...)
	if err := r.t.save(&r.st, r.params, r.opt, r.best); err != nil {
		return err
	}
	r.lastSave = r.now()
	r.saveCost = r.lastSave.Sub(began)
	return nil
}

// finish puts the best weights back (unless KeepLast) and summarises.
func (r *run) finish() *Result {
	if r.best != nil && !r.c.KeepLast {
		res, resident := backend.Current().(backend.Resident)
		for i, p := range r.params {
			copy(p, r.best[i])
			if resident {
				res.Changed(p)
			}
		}
	}
	st, out := &r.st, r.res
	out.Steps = st.Step
	out.BestStep = st.BestStep
	out.BestMetric = st.BestMetric
	out.Stopped = st.Stopped
	out.LastLoss = st.LastLoss
	out.History = st.History
	if r.dev != nil {
		rep := r.dev.report
		out.Device = &rep
	}
	return out
}

// leaveDevice ends a run's time on its device (weights and moments back
// in host memory, device memory freed); nothing on the host.
func (r *run) leaveDevice() {
	if r.dev != nil {
		r.dev.leave(r.opt)
	}
}

// marshalState encodes st for the safetensors metadata.
func marshalState(st *state) (string, error) {
	st.BestJSON = nil
	if !math.IsNaN(st.BestMetric) {
		v := st.BestMetric
		st.BestJSON = &v
	}
	b, err := json.Marshal(st)
	return string(b), err
}

// FromNamed adapts a model's NamedParams for the trainer.
func FromNamed(ps []transformer.NamedParam) []Param {
	out := make([]Param, len(ps))
	for i, p := range ps {
		out[i] = Param{Name: p.Name, Param: p.Param}
	}
	return out
}
