package tensor

import (
	"fmt"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

// sgemm is the one place operators reach the backend.
// kernels returns the current backend's non-GEMM kernels, if it runs them
// itself (CUDA); the operators' own loops run otherwise.
func kernels() (backend.Kernels, bool) { return backend.KernelsOf(backend.Current()) }

func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if beta == 0 {
			for i := 0; i < m; i++ {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	backend.Current().Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

type matMulFn struct {
	a, b           mat.Tensor
	transA, transB bool
	m, n, k        int
	dt             devTemps
}

// MatMul returns op(a) * op(b), where op transposes when the flag is set.
func MatMul(a, b mat.Tensor, transA, transB bool) mat.Tensor {
	ar, ac := Dims(a)
	br, bc := Dims(b)
	m, k := ar, ac
	if transA {
		m, k = ac, ar
	}
	k2, n := br, bc
	if transB {
		k2, n = bc, br
	}
	if k != k2 {
		panic(fmt.Sprintf("tensor.MatMul: inner dimensions differ: %dx%d (trans %v) times %dx%d (trans %v)", ar, ac, transA, br, bc, transB))
	}
	return run(&matMulFn{a: a, b: b, transA: transA, transB: transB, m: m, n: n, k: k})
}

func (f *matMulFn) Operands() []mat.Tensor { return []mat.Tensor{f.a, f.b} }

func (f *matMulFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("MatMul", f.a, f.b); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	out := rawMatrix(f.m, f.n) // written whole by sgemm (beta 0)
	_, ac := Dims(f.a)
	_, bc := Dims(f.b)
	sgemm(f.transA, f.transB, f.m, f.n, f.k, 1, Data(f.a), ac, Data(f.b), bc, 0, Data(out), f.n)
	return wrap(out, f), nil
}

func (f *matMulFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	g := Data(gy)
	m, n, k := f.m, f.n, f.k
	A, B := Data(f.a), Data(f.b)
	_, lda := Dims(f.a)
	_, ldb := Dims(f.b)
	if f.a.RequiresGrad() {
		ga := allocRaw(m * k)
		switch {
		case !f.transA && !f.transB: // dA = G B^T
			sgemm(false, true, m, k, n, 1, g, n, B, ldb, 0, ga, k)
		case !f.transA && f.transB: // dA = G B
			sgemm(false, false, m, k, n, 1, g, n, B, ldb, 0, ga, k)
		case f.transA && !f.transB: // dA (k x m) = B G^T
			sgemm(false, true, k, m, n, 1, B, ldb, g, n, 0, ga, m)
		default: // dA = B^T G^T
			sgemm(true, true, k, m, n, 1, B, ldb, g, n, 0, ga, m)
		}
		accGrad(f.a, ga)
	}
	if f.b.RequiresGrad() {
		gb := allocRaw(k * n)
		switch {
		case !f.transA && !f.transB: // dB = A^T G
			sgemm(true, false, k, n, m, 1, A, lda, g, n, 0, gb, n)
		case f.transA && !f.transB: // dB = A G
			sgemm(false, false, k, n, m, 1, A, lda, g, n, 0, gb, n)
		case !f.transA && f.transB: // dB (n x k) = G^T A
			sgemm(true, false, n, k, m, 1, g, n, A, lda, 0, gb, k)
		default: // dB = G^T A^T
			sgemm(true, true, n, k, m, 1, g, n, A, lda, 0, gb, k)
		}
		accGrad(f.b, gb)
	}
	return nil
}

type linearFn struct {
	x, w, b mat.Tensor
	n, in   int
	out     int
	// io says w is stored [in, out] (GPT-2's Conv1D) rather than [out, in].
	io bool
	dt devTemps
}

// Linear returns x * w^T + b for x [N, in], w [out, in] (Hugging Face's
// layout) and b of out values (nil for no bias): the bias add is fused into
// the sgemm's output.
func Linear(x, w, b mat.Tensor) mat.Tensor {
	n, in := Dims(x)
	out, win := Dims(w)
	if win != in {
		panic(fmt.Sprintf("tensor.Linear: input is %dx%d but weight is %dx%d (want [out, %d])", n, in, out, win, in))
	}
	if b != nil && b.Size() != out {
		panic(fmt.Sprintf("tensor.Linear: bias has %d values, want %d", b.Size(), out))
	}
	return run(&linearFn{x: x, w: w, b: b, n: n, in: in, out: out})
}

// Affine returns x * w + b for x [N, in], w [in, out] and b of out values
// (nil for no bias): the layout of GPT-2's Conv1D layers, which Hugging Face
// stores [in, out]. Keeping that layout makes loading a name map; the bias
// add is fused into the sgemm's output as in Linear.
func Affine(x, w, b mat.Tensor) mat.Tensor {
	n, in := Dims(x)
	win, out := Dims(w)
	if win != in {
		panic(fmt.Sprintf("tensor.Affine: input is %dx%d but weight is %dx%d (want [%d, out])", n, in, win, out, in))
	}
	if b != nil && b.Size() != out {
		panic(fmt.Sprintf("tensor.Affine: bias has %d values, want %d", b.Size(), out))
	}
	return run(&linearFn{x: x, w: w, b: b, n: n, in: in, out: out, io: true})
}

func (f *linearFn) Operands() []mat.Tensor {
	if f.b == nil {
		return []mat.Tensor{f.x, f.w}
	}
	return []mat.Tensor{f.x, f.w, f.b}
}

func (f *linearFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("Linear", f.x, f.w, f.b); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	y := rawMatrix(f.n, f.out) // written whole by the sgemm
	yd := Data(y)
	ldw, transW := f.in, true
	if f.io {
		ldw, transW = f.out, false
	}
	if f.b != nil {
		sgemmBias(false, transW, f.n, f.out, f.in, 1, Data(f.x), f.in, Data(f.w), ldw, Data(f.b), yd, f.out)
	} else {
		sgemm(false, transW, f.n, f.out, f.in, 1, Data(f.x), f.in, Data(f.w), ldw, 0, yd, f.out)
	}
	return wrap(y, f), nil
}

// sgemmBias sets C = alpha*op(A)*op(B) + bias in every row, as copying the
// bias into C's rows and calling sgemm with beta 1 does (bits included):
// the backend adds it inside the product where it can (backend.BiasSgemm),
// saving the copy, which for a 4096 x 1024 output is 16 MB of writes.
func sgemmBias(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	// k == 0 goes to the copy (sgemm then leaves C alone), as the
	// leading dimensions of empty operands need not be valid.
	if bb, ok := backend.Current().(backend.BiasSgemm); ok && k > 0 {
		bb.SgemmBias(transA, transB, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc)
		return
	}
	// On both cores: a 4096 x 1024 output is 16 MB of copying, which on
	// one core left the other idle for a few milliseconds a call.
	ParallelFor(m, max(1, 16384/max(1, n)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(c[i*ldc:i*ldc+n], bias[:n])
		}
	})
	sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, 1, c, ldc)
}

func (f *linearFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	g := Data(gy)
	if f.x.RequiresGrad() {
		gx := allocRaw(f.n * f.in)
		if f.io { // dX = G W^T
			sgemm(false, true, f.n, f.in, f.out, 1, g, f.out, Data(f.w), f.out, 0, gx, f.in)
		} else {
			sgemm(false, false, f.n, f.in, f.out, 1, g, f.out, Data(f.w), f.in, 0, gx, f.in)
		}
		accGrad(f.x, gx)
	}
	if f.w.RequiresGrad() {
		gw := allocRaw(f.out * f.in)
		if f.io { // dW = X^T G, [in, out]
			sgemm(true, false, f.in, f.out, f.n, 1, Data(f.x), f.in, g, f.out, 0, gw, f.out)
		} else {
			sgemm(true, false, f.out, f.in, f.n, 1, g, f.out, Data(f.x), f.in, 0, gw, f.in)
		}
		accGrad(f.w, gw)
	}
	if f.b != nil && f.b.RequiresGrad() {
		accGrad(f.b, colSums(g, f.n, f.out))
	}
	return nil
}
