package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

// unaryFn is an elementwise operator y = f(x) with dy/dx computed from x
// and y; kind names it for the device path (device_ops2.go).
type unaryFn struct {
	x     mat.Tensor
	y     []float32
	f     func(x float32) float32
	deriv func(x, y float32) float32
	kind  unaryKind
	s     float32 // Scale's factor

	dt devTemps
	dy backend.Buffer // the output on the device (Tanh's backward reads it)
}

type unaryKind int

const (
	unaryTanh unaryKind = iota + 1
	unaryAbs
	unaryScale
)

func unary(kind unaryKind, x mat.Tensor, f func(float32) float32, deriv func(x, y float32) float32) mat.Tensor {
	return run(&unaryFn{x: x, f: f, deriv: deriv, kind: kind})
}

func (u *unaryFn) Operands() []mat.Tensor { return []mat.Tensor{u.x} }

func (u *unaryFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("unary", u.x); dev != nil && u.kind != 0 {
		u.dt.dev = dev
		return u.forwardDevice()
	}
	r, c := Dims(u.x)
	out := rawMatrix(r, c) // every element written below
	X, Y := Data(u.x), Data(out)
	ParallelFor(len(X), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			Y[i] = u.f(X[i])
		}
	})
	u.y = Y
	return wrap(out, u), nil
}

func (u *unaryFn) Backward(gy mat.Tensor) error {
	if u.dt.dev != nil {
		return u.backwardDevice(gy)
	}
	if !u.x.RequiresGrad() {
		return nil
	}
	X, G := Data(u.x), Data(gy)
	gx := allocRaw(len(X)) // every element written below
	ParallelFor(len(X), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			gx[i] = G[i] * u.deriv(X[i], u.y[i])
		}
	})
	accGrad(u.x, gx)
	return nil
}

const invSqrt2 = 0.70710678118654752440
const invSqrt2Pi = 0.39894228040143267794

// GELU is the exact Gaussian error linear unit BERT uses,
// x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), computed in float32 (erff,
// expf: absolute error below 1e-6 against float64). Phi(x) is kept from
// the forward pass so the backward pass needs no second erf.
func GELU(x mat.Tensor) mat.Tensor { return run(&geluFn{x: x}) }

type geluFn struct {
	x   mat.Tensor
	cdf []float32

	dt   devTemps
	dcdf backend.Buffer
}

func (f *geluFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *geluFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("GELU", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	out := rawMatrix(r, c) // every element written below
	X, Y := Data(f.x), Data(out)
	f.cdf = allocRaw(len(X))
	if k, ok := kernels(); ok {
		k.GELUForward(X, Y, f.cdf)
		return wrap(out, f), nil
	}
	ParallelFor(len(X), 4096, func(lo, hi int) {
		geluForward(X[lo:hi], Y[lo:hi], f.cdf[lo:hi])
	})
	return wrap(out, f), nil
}

func (f *geluFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	X, G := Data(f.x), Data(gy)
	gx := allocRaw(len(X))
	if k, ok := kernels(); ok {
		k.GELUBackward(X, f.cdf, G, gx)
		accGrad(f.x, gx)
		return nil
	}
	ParallelFor(len(X), 4096, func(lo, hi int) {
		geluBackward(X[lo:hi], f.cdf[lo:hi], G[lo:hi], gx[lo:hi])
	})
	accGrad(f.x, gx)
	return nil
}

// Tanh is the elementwise hyperbolic tangent (BERT's pooler activation).
func Tanh(x mat.Tensor) mat.Tensor {
	return unary(unaryTanh, x,
		func(x float32) float32 { return float32(math.Tanh(float64(x))) },
		func(_, y float32) float32 { return 1 - y*y })
}

// Abs is the elementwise absolute value; its derivative at 0 is taken as 0.
func Abs(x mat.Tensor) mat.Tensor {
	return unary(unaryAbs, x,
		func(x float32) float32 { return float32(math.Abs(float64(x))) },
		func(x, _ float32) float32 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		})
}

// Scale multiplies every element by s.
func Scale(x mat.Tensor, s float32) mat.Tensor {
	return run(&unaryFn{x: x, kind: unaryScale, s: s,
		f:     func(x float32) float32 { return x * s },
		deriv: func(_, _ float32) float32 { return s }})
}

type rowSoftmaxFn struct {
	x   mat.Tensor
	y   []float32
	log bool

	dt devTemps
	dy backend.Buffer // the output on the device
}

// Softmax applies softmax to each row of x separately.
func Softmax(x mat.Tensor) mat.Tensor { return run(&rowSoftmaxFn{x: x}) }

// LogSoftmax applies log-softmax to each row of x separately.
func LogSoftmax(x mat.Tensor) mat.Tensor { return run(&rowSoftmaxFn{x: x, log: true}) }

func (f *rowSoftmaxFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *rowSoftmaxFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("Softmax", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	out := zeroMatrix(r, c)
	X, Y := Data(f.x), Data(out)
	ParallelFor(r, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x, y := X[i*c:(i+1)*c], Y[i*c:(i+1)*c]
			lse := logSumExp(x)
			if f.log {
				subScalar(y, x, lse)
			} else {
				// expf(v - lse) in one pass: the bits of expf((v - lse)
				// - 0), which the log-softmax row then expSub(y, 0) gave
				// (a - 0 is a, bit for bit, NaNs included).
				expSubTo(y, x, lse)
			}
		}
	})
	f.y = Y
	return wrap(out, f), nil
}

// logSoftmaxRow writes log softmax(x) into y: y[j] = x[j] - logSumExp(x).
func logSoftmaxRow(x, y []float32) {
	subScalar(y, x, logSumExp(x))
}

// logSumExp is max + log(sum of exp(x[j] - max)), the sum in float64 for
// accuracy and in element order (expSum).
func logSumExp(x []float32) float32 {
	mx := maxOf(x)
	if mx != mx {
		// The log is NaN too, and with two NaN operands ADDSS returns the
		// first, quieted: the scalar code before the vector paths had mx
		// there. Said explicitly, as the compiler's operand order varies.
		return math.Float32frombits(math.Float32bits(mx) | 1<<22)
	}
	return mx + float32(math.Log(expSum(x, mx)))
}

// maxOf is the fold max(...max(max(x[0], x[1]), x[2])..., x[n-1]) of a
// non-empty x. Without a NaN Go's max is commutative and associative (the
// larger value, +0 over -0), so running maxima, combined at the end, give
// the fold's bits. maxVec's VMAXPS matches Go's max except for the sign
// of a zero, so its result stands when it is neither NaN nor zero.
func maxOf(x []float32) float32 {
	if maxVec != nil && len(x) >= 8 {
		n := len(x) &^ 7
		m, nan := maxVec(&x[0], n)
		for _, v := range x[n:] {
			m = max(m, v)
		}
		if !nan && m == m && m != 0 {
			return m
		}
	}
	return maxOfGo(x)
}

// maxOfGo is maxOf in Go: four running maxima, which run four dependency
// chains at once; with a NaN, whose payload depends on the order, the fold
// itself runs.
func maxOfGo(x []float32) float32 {
	if len(x) < 8 {
		return maxFold(x)
	}
	m0, m1, m2, m3 := x[0], x[1], x[2], x[3]
	i := 4
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		m0, m1, m2, m3 = max(m0, v[0]), max(m1, v[1]), max(m2, v[2]), max(m3, v[3])
	}
	for ; i < len(x); i++ {
		m0 = max(m0, x[i])
	}
	if m := max(max(m0, m1), max(m2, m3)); m == m {
		return m
	}
	return maxFold(x)
}

// maxFold is maxOf's fold, in order.
func maxFold(x []float32) float32 {
	mx := x[0]
	for _, v := range x[1:] {
		mx = max(mx, v)
	}
	return mx
}

func (f *rowSoftmaxFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	G := Data(gy)
	gx := alloc(r * c)
	ParallelFor(r, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			y, g, d := f.y[i*c:(i+1)*c], G[i*c:(i+1)*c], gx[i*c:(i+1)*c]
			if f.log { // dx = g - softmax * sum(g)
				var s float32
				for _, v := range g {
					s += v
				}
				for j := range d {
					d[j] = g[j] - expf(y[j])*s
				}
			} else { // dx = y * (g - <g, y>)
				var s float32
				for j := range g {
					s += g[j] * y[j]
				}
				for j := range d {
					d[j] = y[j] * (g[j] - s)
				}
			}
		}
	})
	accGrad(f.x, gx)
	return nil
}

// dropoutMask draws n multipliers, each 0 with probability p and 1/(1-p)
// otherwise, sequentially from rng: element 2d and 2d+1 come from the
// generator's draw d. With a PCG (math/rand/v2's, read as the device path
// reads it) and enough elements the draws are split among goroutines, each
// starting from the generator's state jumped ahead to its first draw, and
// rng is then moved past all of them: the same numbers, and the same state
// afterwards, as the sequential loop.
func dropoutMask(rng *rand.Rand, n int, p float32) []float32 {
	m := allocRaw(n) // every element written below
	keep := 1 / (1 - p)
	kb := math.Float32bits(keep)
	// One 64-bit draw gives two 32-bit uniforms: half the generator calls.
	thr := uint32(float64(p) * (1 << 32))
	draws := (n + 1) / 2
	fill := func(next func() uint64, d0, d1 int) {
		for d := d0; d < d1; d++ {
			u := next()
			i := 2 * d
			m[i] = math.Float32frombits(kb & atLeast(uint32(u), thr))
			if i+1 < n {
				m[i+1] = math.Float32frombits(kb & atLeast(uint32(u>>32), thr))
			}
		}
	}
	pcg := pcgOf(rng)
	if pcg == nil || draws < parallelDraws || runtime.GOMAXPROCS(0) < 2 {
		fill(rng.Uint64, 0, draws)
		return m
	}
	hi, lo := pcgState(pcg)
	ParallelFor(draws, parallelDraws/2, func(d0, d1 int) {
		var g rand.PCG
		g.Seed(pcgAdvance(hi, lo, uint64(d0)))
		fill(g.Uint64, d0, d1)
	})
	pcg.Seed(pcgAdvance(hi, lo, uint64(draws)))
	return m
}

// atLeast is all ones when u >= thr and zero otherwise, without a branch
// (the sign of the 64-bit difference): keep's bits masked by it are keep
// or +0, the multiplier the comparison picks.
func atLeast(u, thr uint32) uint32 {
	return ^uint32((int64(u) - int64(thr)) >> 63)
}

// parallelDraws is the number of generator draws from which dropoutMask
// splits them among goroutines.
const parallelDraws = 1 << 15

type dropoutFn struct {
	x    mat.Tensor
	mask []float32

	dt    devTemps
	dmask backend.Buffer
}

// Dropout zeroes each element with probability p and scales the rest by
// 1/(1-p) (inverted dropout), drawing from rng. With rng nil or p 0 it
// returns x itself (evaluation mode).
func Dropout(x mat.Tensor, p float32, rng *rand.Rand) mat.Tensor {
	if rng == nil || p == 0 {
		return x
	}
	if p < 0 || p >= 1 {
		panic(fmt.Sprintf("tensor.Dropout: probability %v outside [0, 1)", p))
	}
	if dev := deviceOf("Dropout", x); dev != nil {
		// The mask is drawn here, in program order, as on the host.
		f := &dropoutFn{x: x, dt: devTemps{dev: dev}}
		f.dmask = f.dt.dropoutMask(rng, x.Size(), p)
		return run(f)
	}
	return run(&dropoutFn{x: x, mask: dropoutMask(rng, x.Size(), p)})
}

func (f *dropoutFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *dropoutFn) Forward() (mat.Tensor, error) {
	if f.dt.dev != nil {
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	out := rawMatrix(r, c) // every element written below
	X, Y := Data(f.x), Data(out)
	ParallelFor(len(Y), 8192, func(lo, hi int) {
		mulInto(Y[lo:hi], X[lo:hi], f.mask[lo:hi])
	})
	return wrap(out, f), nil
}

func (f *dropoutFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	G := Data(gy)
	gx := allocRaw(len(G)) // every element written below
	ParallelFor(len(gx), 8192, func(lo, hi int) {
		mulInto(gx[lo:hi], G[lo:hi], f.mask[lo:hi])
	})
	accGrad(f.x, gx)
	return nil
}

// sqrt(2/pi) and the cubic coefficient of the tanh approximation of GELU.
const (
	geluTanhC = 0.7978845608028654
	geluTanhA = 0.044715
)

// GELUTanh is the tanh approximation of GELU that GPT-2 uses (Hugging
// Face's "gelu_new", torch's gelu(approximate="tanh")):
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in float32 with tanhf.
// The tanh is kept from the forward pass for the backward pass.
func GELUTanh(x mat.Tensor) mat.Tensor { return run(&geluTanhFn{x: x}) }

type geluTanhFn struct {
	x mat.Tensor
	t []float32 // tanh(sqrt(2/pi) (x + 0.044715 x^3))

	dt devTemps
	dT backend.Buffer // t on the device
}

func (f *geluTanhFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *geluTanhFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("GELUTanh", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	out := zeroMatrix(r, c)
	X, Y := Data(f.x), Data(out)
	f.t = alloc(len(X))
	if k, ok := kernels(); ok {
		k.GELUTanhForward(X, Y, f.t)
		return wrap(out, f), nil
	}
	ParallelFor(len(X), 4096, func(lo, hi int) {
		geluTanhForward(X[lo:hi], Y[lo:hi], f.t[lo:hi])
	})
	return wrap(out, f), nil
}

func (f *geluTanhFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	X, G := Data(f.x), Data(gy)
	gx := alloc(len(X))
	if k, ok := kernels(); ok {
		k.GELUTanhBackward(X, f.t, G, gx)
		accGrad(f.x, gx)
		return nil
	}
	ParallelFor(len(X), 4096, func(lo, hi int) {
		geluTanhBackward(X[lo:hi], f.t[lo:hi], G[lo:hi], gx[lo:hi])
	})
	accGrad(f.x, gx)
	return nil
}

// ReLU is max(x, 0) elementwise (T5 v1.0's feed-forward activation); its
// derivative at 0 is taken as 0, as torch's.
func ReLU(x mat.Tensor) mat.Tensor { return run(&reluFn{x: x}) }

type reluFn struct {
	x  mat.Tensor
	dt devTemps
}

func (f *reluFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *reluFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("ReLU", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	if k, ok := kernels(); ok {
		out := zeroMatrix(r, c)
		k.ReLUForward(Data(f.x), Data(out))
		return wrap(out, f), nil
	}
	out := rawMatrix(r, c) // every element written below
	X, Y := Data(f.x), Data(out)
	ParallelFor(len(X), 8192, func(lo, hi int) {
		reluMaskInto(Y[lo:hi], X[lo:hi], X[lo:hi])
	})
	return wrap(out, f), nil
}

func (f *reluFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	X, G := Data(f.x), Data(gy)
	if k, ok := kernels(); ok {
		gx := alloc(len(X))
		k.ReLUBackward(X, G, gx)
		accGrad(f.x, gx)
		return nil
	}
	gx := allocRaw(len(X)) // every element written below
	ParallelFor(len(X), 8192, func(lo, hi int) {
		reluMaskInto(gx[lo:hi], X[lo:hi], G[lo:hi])
	})
	accGrad(f.x, gx)
	return nil
}

// positiveMask is all ones when v > 0 (NaN is not) and zero otherwise,
// without a branch: ReLU's inputs are positive or not at random, and a
// branch on the sign mispredicts half the time. x&mask is then x where
// v > 0 and +0 elsewhere, what the comparison and a branch give.
func positiveMask(v float32) uint32 {
	// v > 0 exactly when its bits, as an unsigned number, are in
	// [1, 0x7f800000] (the positive finite values and +Inf): b-1 below
	// 0x7f800000, the sign of the 64-bit difference.
	// (b-1 wraps in 32 bits, so +0 maps above the range.)
	t := uint64(math.Float32bits(v) - 1)
	return uint32((int64(t) - 0x7f800000) >> 63)
}
