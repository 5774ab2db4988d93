package tensor

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/emudev"
)

//go:noinline
func devMulAdd(a, b, c float32) float32 { return a*b + c }

// needUnfusedDev skips where Go fuses multiply-adds: the C kernels never
// do, so the operators' host loops differ from them there.
func needUnfusedDev(t *testing.T) {
	t.Helper()
	a := float32(1 + 1.0/4096)
	if devMulAdd(a, a, -(1+1.0/2048)) != 0 {
		t.Skipf("skipped: this Go build (GOARCH=%s) fuses multiply-adds; the bit-for-bit comparison needs amd64 below GOAMD64=v3", runtime.GOARCH)
	}
}

func randLeaf(r *rand.Rand, rows, cols int) *Matrix {
	d := make([]float32, rows*cols)
	for i := range d {
		d[i] = float32(r.NormFloat64())
	}
	return gradLeaf(rows, cols, d)
}

// devCase builds a graph from leaves and returns its output.
type devCase struct {
	name   string
	leaves func(r *rand.Rand) []*Matrix
	build  func(xs []mat.Tensor, rng *rand.Rand) mat.Tensor
}

// runCase runs c on the host, or with its leaves placed on dev, through
// an MSE loss against fixed targets, and returns the output values, the
// loss and every leaf's gradient.
func runCase(t *testing.T, c devCase, dev backend.Device) (out []float32, loss float32, grads [][]float32) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	leaves := c.leaves(r)
	xs := make([]mat.Tensor, len(leaves))
	for i, l := range leaves {
		xs[i] = l
	}
	if dev != nil {
		Place(dev, xs...)
		defer Unplace(xs...)
	}
	y := c.build(xs, rand.New(rand.NewPCG(5, 6)))
	target := make([]float32, y.Size())
	for i := range target {
		target[i] = float32(r.NormFloat64())
	}
	l := MSE(y, target)
	if err := Backward(l); err != nil {
		t.Fatal(err)
	}
	out = append(out, Data(y)...)
	loss = Data(l)[0]
	for _, x := range xs {
		if dev != nil {
			if g, ok := DeviceGrad(x); ok {
				h := make([]float32, g.Len())
				dev.Download(h, g, 0, "test")
				grads = append(grads, h)
				continue
			}
			grads = append(grads, nil)
			continue
		}
		grads = append(grads, append([]float32(nil), GradData(x)...))
	}
	Release(l)
	return out, loss, grads
}

func bitsEqual(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values on the device, %d on the host", what, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d]: %v on the device, %v on the host", what, i, got[i], want[i])
		}
	}
}

func leaves(shapes ...[2]int) func(r *rand.Rand) []*Matrix {
	return func(r *rand.Rand) []*Matrix {
		var ls []*Matrix
		for _, s := range shapes {
			ls = append(ls, randLeaf(r, s[0], s[1]))
		}
		return ls
	}
}

// TestDeviceOperators runs every operator with a device path on the
// emulated device and on the host: outputs, the MSE loss over them and
// every input gradient agree bit for bit, and nothing falls back.
func TestDeviceOperators(t *testing.T) {
	needUnfusedDev(t)
	cases := []devCase{
		{"Gather", leaves([2]int{7, 5}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return Gather(xs[0], []int{3, 0, 3, 6, 3, 1})
		}},
		{"Add", leaves([2]int{4, 6}, [2]int{4, 6}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return Add(xs[0], xs[1]) }},
		{"Mul", leaves([2]int{4, 6}, [2]int{4, 6}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return Mul(xs[0], xs[1]) }},
		{"Add of a value with itself", leaves([2]int{3, 3}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			y := Mul(xs[0], xs[0])
			return Add(Add(y, y), y)
		}},
		{"MatMul", leaves([2]int{5, 7}, [2]int{7, 3}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return MatMul(xs[0], xs[1], false, false) }},
		{"MatMul A^T", leaves([2]int{7, 5}, [2]int{7, 3}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return MatMul(xs[0], xs[1], true, false) }},
		{"MatMul B^T", leaves([2]int{5, 7}, [2]int{3, 7}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return MatMul(xs[0], xs[1], false, true) }},
		{"MatMul A^T B^T", leaves([2]int{7, 5}, [2]int{3, 7}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return MatMul(xs[0], xs[1], true, true) }},
		{"Linear", leaves([2]int{6, 8}, [2]int{5, 8}, [2]int{5, 1}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return Linear(xs[0], xs[1], xs[2]) }},
		{"Linear without bias", leaves([2]int{6, 8}, [2]int{5, 8}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return Linear(xs[0], xs[1], nil) }},
		{"Affine", leaves([2]int{6, 8}, [2]int{8, 5}, [2]int{5, 1}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return Affine(xs[0], xs[1], xs[2]) }},
		{"LayerNorm", leaves([2]int{5, 16}, [2]int{16, 1}, [2]int{16, 1}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return LayerNorm(xs[0], xs[1], xs[2], 1e-12)
		}},
		{"GELU", leaves([2]int{9, 11}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return GELU(xs[0]) }},
		{"Dropout", leaves([2]int{9, 11}), func(xs []mat.Tensor, rng *rand.Rand) mat.Tensor {
			y := Dropout(xs[0], 0.3, rng)
			// A second mask after the first: the generator must have been
			// left where the host leaves it.
			return Dropout(y, 0.1, rng)
		}},
		{"MeanPool", leaves([2]int{3 * 5, 4}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return MeanPool(xs[0], 3, 5, []int{5, 2, 0}) }},
		{"Attention (padding, dropout)", leaves([2]int{2 * 5, 8}, [2]int{2 * 5, 8}, [2]int{2 * 5, 8}), func(xs []mat.Tensor, rng *rand.Rand) mat.Tensor {
			return Attention(xs[0], xs[1], xs[2], AttentionSpec{Batch: 2, Heads: 2, QLen: 5, KLen: 5, KeyLens: []int{5, 3}, DropProb: 0.2, Rng: rng})
		}},
		{"Attention (causal)", leaves([2]int{2 * 4, 6}, [2]int{2 * 4, 6}, [2]int{2 * 4, 6}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return Attention(xs[0], xs[1], xs[2], AttentionSpec{Batch: 2, Heads: 3, QLen: 4, KLen: 4, KeyLens: []int{2, 4}, Causal: true})
		}},
		{"Attention (cross, a sequence with no key)", leaves([2]int{2 * 3, 4}, [2]int{2 * 6, 4}, [2]int{2 * 6, 4}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return Attention(xs[0], xs[1], xs[2], AttentionSpec{Batch: 2, Heads: 2, QLen: 3, KLen: 6, KeyLens: []int{0, 6}, Scale: 1})
		}},
	}
	checkDeviceCases(t, cases)
}

// checkDeviceCases runs each case on the host and on a fresh emulated
// device: outputs, loss and gradients agree bit for bit, nothing falls
// back, and no device buffer is left allocated.
func checkDeviceCases(t *testing.T, cases []devCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantY, wantL, wantG := runCase(t, c, nil)
			b := emudev.New()
			dev := b.Device()
			gotY, gotL, gotG := runCase(t, c, dev)
			bitsEqual(t, "output", gotY, wantY)
			bitsEqual(t, "loss", []float32{gotL}, []float32{wantL})
			for i := range wantG {
				bitsEqual(t, "gradient", gotG[i], wantG[i])
			}
			for l := range dev.Copies().ByLabel {
				if strings.HasPrefix(l, "fallback") {
					t.Errorf("an operator fell back to the host: %q", l)
				}
			}
			DropIntCache(dev)
			if n, bytes := b.Dev().Live(); n != 0 {
				t.Errorf("%d device buffers (%d bytes) still allocated", n, bytes)
			}
		})
	}
}

// hostTwiceFn is an operator without a device path (every operator of
// the package has one now): y = 2x computed on the host, for
// TestDeviceFallback.
type hostTwiceFn struct{ x mat.Tensor }

func (f *hostTwiceFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *hostTwiceFn) Forward() (mat.Tensor, error) {
	r, c := Dims(f.x)
	out := rawMatrix(r, c)
	y := mat.Data[float32](out)
	for i, v := range Data(f.x) {
		y[i] = 2 * v
	}
	return wrap(out, f), nil
}

func (f *hostTwiceFn) Backward(gy mat.Tensor) error {
	g := Data(gy)
	gx := allocRaw(len(g))
	for i, v := range g {
		gx[i] = 2 * v
	}
	accGrad(f.x, gx)
	return nil
}

// TestDeviceFallback: an operator without a device path in a device graph
// still gives the host's results, and the counter names it.
func TestDeviceFallback(t *testing.T) {
	needUnfusedDev(t)
	c := devCase{"fallback", leaves([2]int{2, 8}, [2]int{2, 8}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
		h := run(&hostTwiceFn{x: Add(xs[0], xs[1])}) // host
		return Mul(Sub(h, xs[0]), xs[1])
	}}
	wantY, wantL, wantG := runCase(t, c, nil)
	b := emudev.New()
	gotY, gotL, gotG := runCase(t, c, b.Device())
	bitsEqual(t, "output", gotY, wantY)
	bitsEqual(t, "loss", []float32{gotL}, []float32{wantL})
	for i := range wantG {
		bitsEqual(t, "gradient", gotG[i], wantG[i])
	}
	copies := b.Dev().Copies()
	t.Logf("copies: %v", copies)
	for _, want := range []string{"fallback: read by *tensor.hostTwiceFn", "fallback: host operand of *tensor.binaryFn", "fallback: host gradient of a device value from *tensor.hostTwiceFn"} {
		if _, ok := copies.ByLabel[want]; !ok {
			t.Errorf("no copy labelled %q", want)
		}
	}
}

// TestPCGAdvance: the jump-ahead lands where stepping the generator does.
func TestPCGAdvance(t *testing.T) {
	p := rand.NewPCG(11, 12)
	hi, lo := pcgState(p)
	for _, steps := range []uint64{0, 1, 2, 3, 7, 64, 1000} {
		q := rand.NewPCG(0, 0)
		q.Seed(hi, lo)
		for i := uint64(0); i < steps; i++ {
			q.Uint64()
		}
		wh, wl := pcgState(q)
		gh, gl := pcgAdvance(hi, lo, steps)
		if gh != wh || gl != wl {
			t.Fatalf("after %d steps: jump-ahead gives %x %x, stepping %x %x", steps, gh, gl, wh, wl)
		}
	}
	if pcgOf(rand.New(p)) != p {
		t.Fatal("pcgOf does not find the PCG inside a rand.Rand")
	}
	if pcgOf(rand.New(rand.NewChaCha8([32]byte{}))) != nil {
		t.Fatal("pcgOf found a PCG in a ChaCha8 generator")
	}
}

// TestDeviceDropoutOtherGenerator: with a generator that is not a PCG the
// mask is drawn on the host and uploaded, and the counter says so.
func TestDeviceDropoutOtherGenerator(t *testing.T) {
	b := emudev.New()
	dev := b.Device()
	x := randLeaf(rand.New(rand.NewPCG(1, 1)), 3, 5)
	want := Data(Dropout(x, 0.5, rand.New(rand.NewChaCha8([32]byte{1}))))
	Place(dev, x)
	defer Unplace(x)
	got := Data(Dropout(x, 0.5, rand.New(rand.NewChaCha8([32]byte{1}))))
	bitsEqual(t, "dropout", got, want)
	if _, ok := b.Dev().Copies().ByLabel["fallback: dropout mask drawn on the host (the generator is not a PCG)"]; !ok {
		t.Errorf("the host-drawn mask is not counted: %v", b.Dev().Copies())
	}
}

// TestDeviceMisuse: operands on two devices, and placing an operator's
// value, are programming errors that panic with a message.
func TestDeviceMisuse(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b := randLeaf(r, 2, 2), randLeaf(r, 2, 2)
	d1, d2 := emudev.New().Device(), emudev.New().Device()
	Place(d1, a)
	defer Unplace(a)
	Place(d2, b)
	defer Unplace(b)
	mustPanic(t, "two devices", func() { Add(a, b) })
	mustPanic(t, "not a leaf", func() { Place(d1, Add(a, a)) })
}

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want one mentioning %q", want)
		}
		if s, _ := r.(string); !strings.Contains(s, want) {
			t.Fatalf("panic %v, want one mentioning %q", r, want)
		}
	}()
	f()
}
