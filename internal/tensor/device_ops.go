package tensor

import (
	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

// The device paths of the operators (see device.go). Each mirrors the
// host code beside it: the same buffers zeroed or written whole, the same
// kernels' arithmetic, the same order of gradient contributions.

func (f *gatherFn) temps() *devTemps    { return &f.dt }
func (f *binaryFn) temps() *devTemps    { return &f.dt }
func (f *matMulFn) temps() *devTemps    { return &f.dt }
func (f *linearFn) temps() *devTemps    { return &f.dt }
func (f *layerNormFn) temps() *devTemps { return &f.dt }
func (f *geluFn) temps() *devTemps      { return &f.dt }
func (f *dropoutFn) temps() *devTemps   { return &f.dt }
func (f *meanPoolFn) temps() *devTemps  { return &f.dt }
func (f *mseFn) temps() *devTemps       { return &f.dt }

// Gather.

func (f *gatherFn) forwardDevice() (mat.Tensor, error) {
	_, c := Dims(f.x)
	X := f.dt.operand(f.x)
	f.didx = f.dt.ints(f.idx, "gather indices")
	out := newDevVal(f.dt.dev, len(f.idx), c)
	if len(f.idx) > 0 {
		f.dt.dev.GatherRows(X, c, f.didx, out.buf)
	}
	return wrapDev(out, f), nil
}

func (f *gatherFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	gx := f.dt.dev.Alloc(max(r*c, 1))
	if len(f.idx) > 0 {
		f.dt.dev.ScatterAddRows(f.dt.gradIn(gy), c, f.didx, gx)
	}
	accGradDev(f.dt.dev, f.x, gx, r, c)
	return nil
}

// Add, Sub, Mul.

func (f *binaryFn) forwardDevice() (mat.Tensor, error) {
	r, c := Dims(f.a)
	A, B := f.dt.operand(f.a), f.dt.operand(f.b)
	out := newDevVal(f.dt.dev, r, c)
	switch f.kind {
	case opAdd:
		f.dt.dev.Add(A, B, out.buf)
	case opSub:
		f.dt.dev.Sub(A, B, out.buf)
	default:
		f.dt.dev.Mul(A, B, out.buf)
	}
	return wrapDev(out, f), nil
}

func (f *binaryFn) backwardDevice(gy mat.Tensor) error {
	dev := f.dt.dev
	G := f.dt.gradIn(gy)
	r, c := Dims(f.a)
	if f.a.RequiresGrad() {
		g := dev.Alloc(max(r*c, 1))
		if f.kind == opMul {
			dev.Mul(G, f.dt.operand(f.b), g)
		} else {
			dev.Copy(g, G)
		}
		accGradDev(dev, f.a, g, r, c)
	}
	if f.b.RequiresGrad() {
		g := dev.Alloc(max(r*c, 1))
		switch f.kind {
		case opMul:
			dev.Mul(G, f.dt.operand(f.a), g)
		case opSub:
			dev.Neg(G, g)
		default:
			dev.Copy(g, G)
		}
		accGradDev(dev, f.b, g, r, c)
	}
	return nil
}

// MatMul.

func (f *matMulFn) forwardDevice() (mat.Tensor, error) {
	_, ac := Dims(f.a)
	_, bc := Dims(f.b)
	out := newDevVal(f.dt.dev, f.m, f.n)
	f.dt.dev.Gemm(f.transA, f.transB, f.m, f.n, f.k, 1, f.dt.operand(f.a), 0, ac, f.dt.operand(f.b), 0, bc, 0, out.buf, 0, f.n, backend.GemmBatch{})
	return wrapDev(out, f), nil
}

func (f *matMulFn) backwardDevice(gy mat.Tensor) error {
	dev := f.dt.dev
	g := f.dt.gradIn(gy)
	m, n, k := f.m, f.n, f.k
	A, B := f.dt.operand(f.a), f.dt.operand(f.b)
	_, lda := Dims(f.a)
	_, ldb := Dims(f.b)
	one := backend.GemmBatch{}
	if f.a.RequiresGrad() {
		ga := dev.Alloc(max(m*k, 1))
		switch {
		case !f.transA && !f.transB:
			dev.Gemm(false, true, m, k, n, 1, g, 0, n, B, 0, ldb, 0, ga, 0, k, one)
		case !f.transA && f.transB:
			dev.Gemm(false, false, m, k, n, 1, g, 0, n, B, 0, ldb, 0, ga, 0, k, one)
		case f.transA && !f.transB:
			dev.Gemm(false, true, k, m, n, 1, B, 0, ldb, g, 0, n, 0, ga, 0, m, one)
		default:
			dev.Gemm(true, true, k, m, n, 1, B, 0, ldb, g, 0, n, 0, ga, 0, m, one)
		}
		ar, ac := Dims(f.a)
		accGradDev(dev, f.a, ga, ar, ac)
	}
	if f.b.RequiresGrad() {
		gb := dev.Alloc(max(k*n, 1))
		switch {
		case !f.transA && !f.transB:
			dev.Gemm(true, false, k, n, m, 1, A, 0, lda, g, 0, n, 0, gb, 0, n, one)
		case f.transA && !f.transB:
			dev.Gemm(false, false, k, n, m, 1, A, 0, lda, g, 0, n, 0, gb, 0, n, one)
		case !f.transA && f.transB:
			dev.Gemm(true, false, n, k, m, 1, g, 0, n, A, 0, lda, 0, gb, 0, k, one)
		default:
			dev.Gemm(true, true, n, k, m, 1, g, 0, n, A, 0, lda, 0, gb, 0, k, one)
		}
		br, bc := Dims(f.b)
		accGradDev(dev, f.b, gb, br, bc)
	}
	return nil
}

// Linear and Affine.

func (f *linearFn) forwardDevice() (mat.Tensor, error) {
	dev := f.dt.dev
	y := newDevVal(dev, f.n, f.out)
	var beta float32
	if f.b != nil {
		dev.BroadcastRows(f.dt.operand(f.b), y.buf)
		beta = 1
	}
	X, W := f.dt.operand(f.x), f.dt.operand(f.w)
	one := backend.GemmBatch{}
	if f.io {
		dev.Gemm(false, false, f.n, f.out, f.in, 1, X, 0, f.in, W, 0, f.out, beta, y.buf, 0, f.out, one)
	} else {
		dev.Gemm(false, true, f.n, f.out, f.in, 1, X, 0, f.in, W, 0, f.in, beta, y.buf, 0, f.out, one)
	}
	return wrapDev(y, f), nil
}

func (f *linearFn) backwardDevice(gy mat.Tensor) error {
	dev := f.dt.dev
	g := f.dt.gradIn(gy)
	one := backend.GemmBatch{}
	if f.x.RequiresGrad() {
		gx := dev.Alloc(max(f.n*f.in, 1))
		W := f.dt.operand(f.w)
		if f.io {
			dev.Gemm(false, true, f.n, f.in, f.out, 1, g, 0, f.out, W, 0, f.out, 0, gx, 0, f.in, one)
		} else {
			dev.Gemm(false, false, f.n, f.in, f.out, 1, g, 0, f.out, W, 0, f.in, 0, gx, 0, f.in, one)
		}
		accGradDev(dev, f.x, gx, f.n, f.in)
	}
	if f.w.RequiresGrad() {
		gw := dev.Alloc(max(f.out*f.in, 1))
		X := f.dt.operand(f.x)
		if f.io {
			dev.Gemm(true, false, f.in, f.out, f.n, 1, X, 0, f.in, g, 0, f.out, 0, gw, 0, f.out, one)
		} else {
			dev.Gemm(true, false, f.out, f.in, f.n, 1, g, 0, f.out, X, 0, f.in, 0, gw, 0, f.in, one)
		}
		wr, wc := Dims(f.w)
		accGradDev(dev, f.w, gw, wr, wc)
	}
	if f.b != nil && f.b.RequiresGrad() {
		gb := dev.Alloc(max(f.out, 1))
		dev.ColSums(g, f.n, f.out, gb)
		br, bc := Dims(f.b)
		accGradDev(dev, f.b, gb, br, bc)
	}
	return nil
}

// LayerNorm.

func (f *layerNormFn) forwardDevice() (mat.Tensor, error) {
	dev := f.dt.dev
	r, c := Dims(f.x)
	y := newDevVal(dev, r, c)
	f.dxhat = f.dt.keep(dev.Alloc(max(r*c, 1)))
	f.drstd = f.dt.keep(dev.Alloc(max(r, 1)))
	if r > 0 {
		dev.LayerNormForward(f.dt.operand(f.x), f.dt.operand(f.g), f.dt.operand(f.b), r, c, f.eps, y.buf, f.dxhat, f.drstd)
	}
	return wrapDev(y, f), nil
}

// gainGradDevice is gainGrad on the device: the column sums of gy * xhat.
func gainGradDevice(dev backend.Device, gy, xhat backend.Buffer, r, c int) backend.Buffer {
	prod := dev.Alloc(max(r*c, 1))
	dev.Mul(gy, xhat, prod)
	g := dev.Alloc(max(c, 1))
	dev.ColSums(prod, r, c, g)
	dev.Free(prod)
	return g
}

func (f *layerNormFn) backwardDevice(gy mat.Tensor) error {
	dev := f.dt.dev
	r, c := Dims(f.x)
	Gy := f.dt.gradIn(gy)
	if f.x.RequiresGrad() {
		gx := dev.Alloc(max(r*c, 1))
		if r > 0 {
			dev.LayerNormBackward(Gy, f.dt.operand(f.g), f.dxhat, f.drstd, r, c, gx)
		}
		accGradDev(dev, f.x, gx, r, c)
	}
	if f.g.RequiresGrad() {
		gr, gc := Dims(f.g)
		accGradDev(dev, f.g, gainGradDevice(dev, Gy, f.dxhat, r, c), gr, gc)
	}
	if f.b.RequiresGrad() {
		gb := dev.Alloc(max(c, 1))
		dev.ColSums(Gy, r, c, gb)
		br, bc := Dims(f.b)
		accGradDev(dev, f.b, gb, br, bc)
	}
	return nil
}

// GELU.

func (f *geluFn) forwardDevice() (mat.Tensor, error) {
	dev := f.dt.dev
	r, c := Dims(f.x)
	y := newDevVal(dev, r, c)
	f.dcdf = f.dt.keep(dev.Alloc(max(r*c, 1)))
	dev.GELUForward(f.dt.operand(f.x), y.buf, f.dcdf)
	return wrapDev(y, f), nil
}

func (f *geluFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	dev := f.dt.dev
	r, c := Dims(f.x)
	gx := dev.Alloc(max(r*c, 1))
	dev.GELUBackward(f.dt.operand(f.x), f.dcdf, f.dt.gradIn(gy), gx)
	accGradDev(dev, f.x, gx, r, c)
	return nil
}

// Dropout.

func (f *dropoutFn) forwardDevice() (mat.Tensor, error) {
	r, c := Dims(f.x)
	y := newDevVal(f.dt.dev, r, c)
	f.dt.dev.Mul(f.dt.operand(f.x), f.dmask, y.buf)
	return wrapDev(y, f), nil
}

func (f *dropoutFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	gx := f.dt.dev.Alloc(max(r*c, 1))
	f.dt.dev.Mul(f.dt.gradIn(gy), f.dmask, gx)
	accGradDev(f.dt.dev, f.x, gx, r, c)
	return nil
}

// MeanPool.

func (f *meanPoolFn) forwardDevice() (mat.Tensor, error) {
	_, c := Dims(f.x)
	out := newDevVal(f.dt.dev, f.b, c)
	f.dlens = f.dt.ints(f.lens, "pooling lengths")
	f.dt.dev.MeanPool(f.dt.operand(f.x), f.t, c, f.dlens, out.buf)
	return wrapDev(out, f), nil
}

func (f *meanPoolFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	_, c := Dims(f.x)
	gx := f.dt.dev.Alloc(max(f.b*f.t*c, 1))
	f.dt.dev.MeanPoolBackward(f.dt.gradIn(gy), f.t, c, f.dlens, gx)
	accGradDev(f.dt.dev, f.x, gx, f.b*f.t, c)
	return nil
}

// MSE.

func (f *mseFn) forwardDevice() (mat.Tensor, error) {
	dev := f.dt.dev
	f.dtarget = f.dt.keep(dev.Alloc(max(len(f.target), 1)))
	dev.Upload(f.dtarget, 0, f.target, "loss targets")
	out := newDevVal(dev, 1, 1)
	dev.MSEForward(f.dt.operand(f.x), f.dtarget, out.buf)
	return wrapDev(out, f), nil
}

func (f *mseFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	gx := f.dt.dev.Alloc(max(r*c, 1))
	f.dt.dev.MSEBackward(f.dt.operand(f.x), f.dtarget, f.dt.gradIn(gy), gx)
	accGradDev(f.dt.dev, f.x, gx, r, c)
	return nil
}
