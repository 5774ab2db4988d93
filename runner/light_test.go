package runner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"repro/graph"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
	"repro/registry"

	"github.com/nlpodyssey/spago/nn"
	"github.com/zclconf/go-cty/cty"
)

// lightCase is a run of a training stage (heavy) and an evaluation
// (light) that becomes ready while it trains: both do real tensor
// arithmetic -- batched operators, the buffer free lists, Backward and
// Release -- so running them at once exercises everything the tensor
// stages of one process share.
type lightCase struct {
	// overlap makes the training wait, half way, until the evaluation has
	// finished (its EventDone): with -j 2 that happens only if the
	// evaluation runs beside the training.
	overlap  bool
	started  chan struct{} // closed when the training has started
	evalDone chan struct{} // closed by the events callback
	once     sync.Once
}

func (lc *lightCase) types() map[string]*registry.StageType {
	ts := map[string]*registry.StageType{}
	ts["train"] = &registry.StageType{
		Name: "test.train", Version: 1, Tensor: true,
		Outputs: []registry.Port{{Name: "model", Kind: registry.KindMetrics}},
		Run: func(ctx context.Context, env *registry.Env) error {
			close(lc.started)
			w, err := trainLinear(40, func(step int) error {
				if !lc.overlap || step != 20 {
					return nil
				}
				select {
				case <-lc.evalDone:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Minute):
					return errors.New("the evaluation did not finish while the training ran")
				}
			})
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(env.Output("model"), "weights.bin"), floats(w), 0o644)
		},
	}
	// data is a small data stage that is ready only once the training
	// has started, so its evaluation becomes ready mid-training.
	ts["data"] = &registry.StageType{
		Name: "test.data", Version: 1,
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			if lc.overlap {
				select {
				case <-lc.started:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return os.WriteFile(filepath.Join(env.Output("out"), "data.txt"), []byte("eval data"), 0o644)
		},
	}
	ts["eval"] = &registry.StageType{
		Name: "test.eval", Version: 1, Tensor: true, Light: true,
		Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences}},
		Outputs: []registry.Port{{Name: "metrics", Kind: registry.KindMetrics}},
		Run: func(ctx context.Context, env *registry.Env) error {
			v := evalForward(30)
			return os.WriteFile(filepath.Join(env.Output("metrics"), "metrics.bin"), floats(v), 0o644)
		},
	}
	return ts
}

func (lc *lightCase) graph(t *testing.T) *graph.Graph {
	ts := lc.types()
	return &graph.Graph{Nodes: []*graph.Node{
		node(t, "train", ts["train"], nil, nil),
		node(t, "data", ts["data"], nil, nil),
		node(t, "eval", ts["eval"], nil, map[string]graph.Edge{"in": {Node: "data", Output: "out"}}),
	}}
}

// trainLinear trains a two-layer model on fixed data for steps updates
// (plain gradient descent), calling wait before each; it returns the
// weights.
func trainLinear(steps int, wait func(step int) error) ([]float32, error) {
	rng := rand.New(rand.NewPCG(7, 11))
	const b, d, classes = 64, 96, 10
	x := tensor.New(b, d, randn(rng, b*d))
	w1 := nn.NewParam(tensor.New(d, d, randn(rng, d*d)))
	w2 := nn.NewParam(tensor.New(d, classes, randn(rng, d*classes)))
	targets := make([]int, b)
	for i := range targets {
		targets[i] = rng.IntN(classes)
	}
	for step := 0; step < steps; step++ {
		if err := wait(step); err != nil {
			return nil, err
		}
		h := tensor.GELU(tensor.MatMul(x, w1, false, false))
		l, err := loss.TokenCE(tensor.MatMul(h, w2, false, false), targets)
		if err != nil {
			return nil, err
		}
		if err := tensor.Backward(l); err != nil {
			return nil, err
		}
		for _, p := range []*nn.Param{w1, w2} {
			g, v := tensor.GradData(p), tensor.Data(p)
			for i := range v {
				v[i] -= 0.05 * g[i]
			}
			p.ZeroGrad()
		}
		tensor.Release(l)
	}
	return append(append([]float32{}, tensor.Data(w1)...), tensor.Data(w2)...), nil
}

// evalForward runs n forward passes of a fixed model and returns the sum
// of their softmax outputs.
func evalForward(n int) []float32 {
	rng := rand.New(rand.NewPCG(3, 5))
	const b, d = 128, 96
	x := tensor.New(b, d, randn(rng, b*d))
	w := tensor.New(d, d, randn(rng, d*d))
	sum := make([]float32, b*d)
	for i := 0; i < n; i++ {
		y := tensor.Softmax(tensor.GELU(tensor.MatMul(x, w, false, true)))
		for j, v := range tensor.Data(y) {
			sum[j] += v
		}
		tensor.Release(y)
	}
	return sum
}

func randn(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * 0.1)
	}
	return v
}

func floats(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// runLight runs the case with -j jobs and returns the run's output digests
// and the order in which stages finished.
func runLight(t *testing.T, lc *lightCase, jobs int) (map[string]string, []string) {
	t.Helper()
	c := openTemp(t)
	var mu sync.Mutex
	var order []string
	binds := 0
	exec := &Local{Store: c, Bind: func(registry.Device) (func(), error) {
		mu.Lock()
		binds++
		mu.Unlock()
		return func() {}, nil
	}}
	res, err := Run(context.Background(), c, lc.graph(t), Options{Jobs: jobs, Executor: exec, Events: func(ev Event) {
		if ev.Kind == EventDone {
			order = append(order, ev.Node)
			if ev.Node == "eval" {
				lc.once.Do(func() { close(lc.evalDone) })
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, n := range res.Nodes {
		for port, a := range n.Outputs {
			digests[n.ID+"."+port] = a.Digest
		}
	}
	if jobs >= 2 && lc.overlap && binds != 1 {
		t.Errorf("%d bindings: the evaluation should share the training's CPU binding", binds)
	}
	return digests, order
}

func newLightCase(overlap bool) *lightCase {
	return &lightCase{overlap: overlap, started: make(chan struct{}), evalDone: make(chan struct{})}
}

// With -j 2 an evaluation that becomes ready while a training stage runs
// finishes before the training does (the training waits for it half way,
// which would fail after a minute if the evaluation waited for the
// training), and every output is bit-identical to a -j 1 run, where the
// two run one after the other.
func TestLightStageRunsBesideTraining(t *testing.T) {
	serial, order := runLight(t, newLightCase(false), 1)
	if fmt.Sprint(order) != "[train data eval]" && fmt.Sprint(order) != "[data train eval]" {
		t.Logf("-j 1 order: %v", order)
	}
	beside, order := runLight(t, newLightCase(true), 2)
	if len(order) != 3 || order[len(order)-1] != "train" {
		t.Errorf("-j 2: stages finished in the order %v, want the training last", order)
	}
	if fmt.Sprint(serial) != fmt.Sprint(beside) {
		t.Errorf("outputs differ between -j 1 and -j 2:\n%v\n%v", serial, beside)
	}
	// And again, run against run: the same bits.
	again, _ := runLight(t, newLightCase(true), 2)
	if fmt.Sprint(again) != fmt.Sprint(beside) {
		t.Errorf("two -j 2 runs differ:\n%v\n%v", beside, again)
	}
}

// A light stage never runs beside another tensor stage with -j 1, and a
// heavy stage never beside another heavy one: the CPU lanes allow one of
// each.
func TestTensorLanes(t *testing.T) {
	var mu sync.Mutex
	running, most := map[string]int{}, map[string]int{}
	track := func(kind string) func(context.Context, *registry.Env) error {
		return func(ctx context.Context, env *registry.Env) error {
			mu.Lock()
			running[kind]++
			running["all"]++
			most[kind] = max(most[kind], running[kind])
			most["all"] = max(most["all"], running["all"])
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // widens the window; correctness does not depend on it
			mu.Lock()
			running[kind]--
			running["all"]--
			mu.Unlock()
			return os.WriteFile(filepath.Join(env.Output("out"), "x"), []byte(env.Params.(*sourceParams).Text), 0o644)
		}
	}
	heavy := &registry.StageType{Name: "test.heavy", Version: 1, Tensor: true, Params: sourceParams{},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}}, Run: track("heavy")}
	light := &registry.StageType{Name: "test.light", Version: 1, Tensor: true, Light: true, Params: sourceParams{},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}}, Run: track("light")}
	for _, jobs := range []int{1, 4} {
		mu.Lock()
		running, most = map[string]int{}, map[string]int{}
		mu.Unlock()
		var nodes []*graph.Node
		for i := 0; i < 4; i++ {
			nodes = append(nodes, node(t, fmt.Sprintf("h%d", i), heavy, map[string]cty.Value{"text": cty.StringVal(fmt.Sprint(i))}, nil))
			nodes = append(nodes, node(t, fmt.Sprintf("l%d", i), light, map[string]cty.Value{"text": cty.StringVal(fmt.Sprint(i))}, nil))
		}
		c := openTemp(t)
		if _, err := Run(context.Background(), c, &graph.Graph{Nodes: nodes}, Options{Jobs: jobs, Executor: &Local{Store: c}}); err != nil {
			t.Fatal(err)
		}
		if most["heavy"] > 1 || most["all"] > 2 || (jobs == 1 && most["all"] > 1) {
			t.Errorf("-j %d: at most %d heavy, %d tensor stages at once", jobs, most["heavy"], most["all"])
		}
	}
}

// Local shares one CPU binding between stages and makes a stage that needs
// another binding (a GPU) wait until every user of the current one is
// done; a stage arriving while one waits queues behind it.
func TestLocalBindingSharing(t *testing.T) {
	var mu sync.Mutex
	var bound []string
	active := ""
	l := &Local{Bind: func(d registry.Device) (func(), error) {
		mu.Lock()
		defer mu.Unlock()
		if active != "" {
			t.Errorf("bind %s while %s is bound", d.Name, active)
		}
		active = d.Name
		bound = append(bound, d.Name)
		return func() { mu.Lock(); active = ""; mu.Unlock() }, nil
	}}
	cpu := registry.Device{Name: "cpu", Backend: "cpu"}
	gpu := registry.Device{Name: "cuda:0", Backend: "cuda"}
	r1, err := l.bind(cpu)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := l.bind(cpu) // shares
	gotGPU := make(chan func())
	go func() {
		r, _ := l.bind(gpu)
		gotGPU <- r
	}()
	// The GPU stage waits; wait until it is counted, then a CPU stage
	// arriving now queues behind it instead of joining.
	for {
		l.bmu.Lock()
		w := l.bticket - l.bserved
		l.bmu.Unlock()
		if w == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	gotCPU := make(chan func())
	go func() {
		r, _ := l.bind(cpu)
		gotCPU <- r
	}()
	select {
	case <-gotGPU:
		t.Fatal("the GPU binding was granted while CPU stages use theirs")
	case <-gotCPU:
		t.Fatal("a CPU stage joined while a GPU stage waited")
	case <-time.After(50 * time.Millisecond):
	}
	r1()
	r2()
	rg := <-gotGPU
	rg()
	rc := <-gotCPU
	rc()
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(bound) != "[cpu cuda:0 cpu]" {
		t.Errorf("bindings %v, want [cpu cuda:0 cpu]", bound)
	}
}
