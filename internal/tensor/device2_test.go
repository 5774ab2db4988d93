package tensor

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/emudev"
)

// leavesWith is leaves with some values set: edit changes leaf i's data
// after it is drawn (zeros for Abs's kink, a zero row for L2Normalize's
// floor, large values for tanh's exp branch).
func leavesWith(edit func(i int, d []float32), shapes ...[2]int) func(r *rand.Rand) []*Matrix {
	return func(r *rand.Rand) []*Matrix {
		ls := leaves(shapes...)(r)
		for i, l := range ls {
			edit(i, Data(l))
		}
		return ls
	}
}

// TestDeviceOperators2 is TestDeviceOperators for the second slice: Sub,
// Scale, Abs, Tanh, ConcatCols/Rows, SliceCols, RowDot, GELUTanh, ReLU,
// L2Normalize, RMSNorm, Sum, Mean, Softmax, LogSoftmax, CrossEntropy (with
// ignored rows), BucketBias and attention with a score bias (shared and
// per sequence, with dropout and causal masks), and the losses built from
// them (SimCSE's cosine matrix, PaSeR's features).
func TestDeviceOperators2(t *testing.T) {
	needUnfusedDev(t)
	one := func(f func(x mat.Tensor) mat.Tensor) func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
		return func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return f(xs[0]) }
	}
	spread := func(i int, d []float32) { // values up to +-8: tanh's exp branch, exp's range
		for j := range d {
			d[j] *= 1 + float32(j%4)
		}
		if len(d) > 3 {
			d[0], d[1], d[2] = 0, -0.625, 0.625
		}
	}
	cases := []devCase{
		{"Sub", leaves([2]int{4, 6}, [2]int{4, 6}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return Sub(xs[0], xs[1]) }},
		{"Sub of a value from itself", leaves([2]int{3, 3}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return Sub(Mul(xs[0], xs[0]), xs[0])
		}},
		{"Scale", leaves([2]int{5, 7}), one(func(x mat.Tensor) mat.Tensor { return Scale(x, 1/0.05) })},
		{"Abs", leavesWith(func(_ int, d []float32) { d[0], d[5] = 0, float32(negZero()) }, [2]int{5, 7}), one(Abs)},
		{"Tanh", leavesWith(spread, [2]int{9, 11}), one(Tanh)},
		{"GELUTanh", leavesWith(spread, [2]int{9, 11}), one(GELUTanh)},
		{"ReLU", leavesWith(func(_ int, d []float32) { d[3] = 0 }, [2]int{9, 11}), one(ReLU)},
		{"ConcatCols", leaves([2]int{4, 3}, [2]int{4, 5}, [2]int{4, 1}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return ConcatCols(xs[0], xs[1], xs[0], xs[2])
		}},
		{"ConcatRows", leaves([2]int{2, 5}, [2]int{3, 5}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return ConcatRows(xs[0], xs[1], xs[0])
		}},
		{"SliceCols", leaves([2]int{4, 9}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return Add(SliceCols(xs[0], 0, 3), Mul(SliceCols(xs[0], 3, 6), SliceCols(xs[0], 6, 9)))
		}},
		{"RowDot", leaves([2]int{6, 5}, [2]int{6, 5}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return RowDot(xs[0], xs[1]) }},
		{"L2Normalize (a zero row)", leavesWith(func(_ int, d []float32) { clear(d[8:16]) }, [2]int{4, 8}), one(L2Normalize)},
		{"RMSNorm", leaves([2]int{5, 16}, [2]int{16, 1}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor { return RMSNorm(xs[0], xs[1], 1e-6) }},
		{"Sum", leaves([2]int{5, 7}), one(Sum)},
		{"Mean", leaves([2]int{5, 7}), one(Mean)},
		{"Softmax", leavesWith(spread, [2]int{6, 9}), one(Softmax)},
		{"LogSoftmax", leavesWith(spread, [2]int{6, 9}), one(LogSoftmax)},
		{"CrossEntropy", leavesWith(spread, [2]int{6, 9}), one(func(x mat.Tensor) mat.Tensor {
			return CrossEntropy(x, []int{3, IgnoreIndex, 0, 8, IgnoreIndex, 3})
		})},
		{"CrossEntropy, every row ignored", leaves([2]int{2, 4}), one(func(x mat.Tensor) mat.Tensor {
			return Add(CrossEntropy(x, []int{IgnoreIndex, IgnoreIndex}), Sum(x))
		})},
		{"SimCSE loss (cosine matrix, scale, cross-entropy)", leaves([2]int{6, 8}, [2]int{6, 8}, [2]int{6, 8}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			sim := Scale(CosineMatrix(xs[0], ConcatRows(xs[1], xs[2])), 1/0.05)
			return CrossEntropy(sim, []int{0, 1, 2, 3, 4, 5})
		}},
		{"PaSeR features (abs, sub, mul, concat)", leaves([2]int{3, 4}, [2]int{3, 4}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			diff := Scale(Abs(Sub(xs[0], xs[1])), 0.5)
			prod := Scale(Abs(Mul(xs[0], xs[1])), 2)
			return Tanh(ConcatCols(xs[0], xs[1], diff, prod))
		}},
		{"BucketBias", leaves([2]int{6, 2}), one(func(w mat.Tensor) mat.Tensor {
			return BucketBias(w, []int{0, 1, 5, 2, 2, 3, 4, 0, 1, 1, 5, 0}, 3, 4)
		})},
		{"Attention (shared bias, padding, dropout)", leaves([2]int{2 * 4, 8}, [2]int{2 * 4, 8}, [2]int{2 * 4, 8}, [2]int{6, 2}), func(xs []mat.Tensor, rng *rand.Rand) mat.Tensor {
			bias := BucketBias(xs[3], []int{0, 1, 2, 3, 4, 0, 1, 2, 5, 4, 0, 1, 5, 5, 4, 0}, 4, 4)
			return Attention(xs[0], xs[1], xs[2], AttentionSpec{Batch: 2, Heads: 2, QLen: 4, KLen: 4, KeyLens: []int{4, 2}, DropProb: 0.2, Rng: rng, Scale: 1, Bias: bias})
		}},
		{"Attention (shared bias, causal)", leaves([2]int{3 * 4, 6}, [2]int{3 * 4, 6}, [2]int{3 * 4, 6}, [2]int{3 * 4, 4}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return Attention(xs[0], xs[1], xs[2], AttentionSpec{Batch: 3, Heads: 3, QLen: 4, KLen: 4, Causal: true, Scale: 1, Bias: xs[3]})
		}},
		{"Attention (bias per sequence)", leaves([2]int{2 * 3, 4}, [2]int{2 * 5, 4}, [2]int{2 * 5, 4}, [2]int{2 * 2 * 3, 5}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			return Attention(xs[0], xs[1], xs[2], AttentionSpec{Batch: 2, Heads: 2, QLen: 3, KLen: 5, KeyLens: []int{5, 0}, Bias: xs[3]})
		}},
		{"Attention (constant bias)", leaves([2]int{2 * 3, 4}, [2]int{2 * 3, 4}, [2]int{2 * 3, 4}), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			b := New(2*3, 3, []float32{0, 1, -1, 2, 0.5, 0, 3, -2, 1, 0, 0, 1, 1, 1, -1, 0, 2, 0})
			return Attention(xs[0], xs[1], xs[2], AttentionSpec{Batch: 2, Heads: 2, QLen: 3, KLen: 3, Bias: b})
		}},
	}
	checkDeviceCases(t, cases[:len(cases)-1])
	// A host bias (a constant) is uploaded for the softmax kernel, labelled
	// as a host leaf, not as a fallback.
	c := cases[len(cases)-1]
	wantY, wantL, wantG := runCase(t, c, nil)
	b := emudev.New()
	gotY, gotL, gotG := runCase(t, c, b.Device())
	bitsEqual(t, "output", gotY, wantY)
	bitsEqual(t, "loss", []float32{gotL}, []float32{wantL})
	for i := range wantG {
		bitsEqual(t, "gradient", gotG[i], wantG[i])
	}
	for l := range b.Dev().Copies().ByLabel {
		if strings.HasPrefix(l, "fallback") {
			t.Errorf("a constant operand is labelled as a fallback: %q", l)
		}
	}
	if _, ok := b.Dev().Copies().ByLabel["host leaf (a constant, or a parameter not placed) into *tensor.attentionFn"]; !ok {
		t.Errorf("the constant bias is not counted as uploaded: %v", b.Dev().Copies())
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

// TestDeviceCrossEntropyCopies: cross-entropy on the device copies its
// targets up once (cached afterwards) and nothing else; the loss stays on
// the device until read.
func TestDeviceCrossEntropyCopies(t *testing.T) {
	b := emudev.New()
	dev := b.Device()
	x := randLeaf(rand.New(rand.NewPCG(1, 2)), 5, 7)
	Place(dev, x)
	defer Unplace(x)
	before := dev.Copies()
	for step := 0; step < 2; step++ {
		l := CrossEntropy(x, []int{1, 2, IgnoreIndex, 6, 0})
		if err := Backward(l); err != nil {
			t.Fatal(err)
		}
		Release(l)
		ZeroDeviceGrad(x)
	}
	c := dev.Copies().Since(before)
	want := backend.Copy{Up: 1, UpBytes: 4 * 5}
	if len(c.ByLabel) != 1 || c.ByLabel["cross-entropy targets"] != want {
		t.Errorf("two steps copied %v, want the targets once (%+v)", c, want)
	}
	for l := range c.ByLabel {
		if strings.HasPrefix(l, "fallback") {
			t.Errorf("fell back: %q", l)
		}
	}
	DropIntCache(dev)
	Unplace(x)
	if n, _ := b.Dev().Live(); n != 0 {
		t.Errorf("%d device buffers still allocated", n)
	}
}
