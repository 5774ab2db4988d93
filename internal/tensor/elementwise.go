package tensor

import (
	"fmt"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

type binaryKind int

const (
	opAdd binaryKind = iota
	opSub
	opMul
)

type binaryFn struct {
	a, b mat.Tensor
	kind binaryKind
	dt   devTemps
}

// Add returns a + b (same shapes).
func Add(a, b mat.Tensor) mat.Tensor {
	mustSameShape("Add", a, b)
	return run(&binaryFn{a: a, b: b, kind: opAdd})
}

// Sub returns a - b (same shapes).
func Sub(a, b mat.Tensor) mat.Tensor {
	mustSameShape("Sub", a, b)
	return run(&binaryFn{a: a, b: b, kind: opSub})
}

// Mul returns the elementwise product a * b (same shapes).
func Mul(a, b mat.Tensor) mat.Tensor {
	mustSameShape("Mul", a, b)
	return run(&binaryFn{a: a, b: b, kind: opMul})
}

func (f *binaryFn) Operands() []mat.Tensor { return []mat.Tensor{f.a, f.b} }

func (f *binaryFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("Add", f.a, f.b); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.a)
	out := rawMatrix(r, c) // every element written below
	A, B, Y := Data(f.a), Data(f.b), Data(out)
	ParallelFor(len(Y), 8192, func(lo, hi int) {
		switch f.kind {
		case opAdd:
			for i := lo; i < hi; i++ {
				Y[i] = A[i] + B[i]
			}
		case opSub:
			for i := lo; i < hi; i++ {
				Y[i] = A[i] - B[i]
			}
		case opMul:
			for i := lo; i < hi; i++ {
				Y[i] = A[i] * B[i]
			}
		}
	})
	return wrap(out, f), nil
}

func (f *binaryFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	G := Data(gy)
	// On both cores, as Forward: the residual additions' gradients are
	// whole activations, copied on one core before.
	if f.a.RequiresGrad() {
		ga := allocRaw(len(G)) // every element written below
		ParallelFor(len(G), 8192, func(lo, hi int) {
			if f.kind == opMul {
				mulInto(ga[lo:hi], G[lo:hi], Data(f.b)[lo:hi])
			} else {
				copy(ga[lo:hi], G[lo:hi])
			}
		})
		accGrad(f.a, ga)
	}
	if f.b.RequiresGrad() {
		gb := allocRaw(len(G)) // every element written below
		ParallelFor(len(G), 8192, func(lo, hi int) {
			switch f.kind {
			case opMul:
				mulInto(gb[lo:hi], G[lo:hi], Data(f.a)[lo:hi])
			case opSub:
				for i := lo; i < hi; i++ {
					gb[i] = -G[i]
				}
			default:
				copy(gb[lo:hi], G[lo:hi])
			}
		})
		accGrad(f.b, gb)
	}
	return nil
}

type concatFn struct {
	xs   []mat.Tensor
	cols bool
	dt   devTemps
}

// ConcatCols places matrices with equal row counts side by side.
func ConcatCols(xs ...mat.Tensor) mat.Tensor {
	r, _ := Dims(xs[0])
	for _, x := range xs[1:] {
		if xr, _ := Dims(x); xr != r {
			panic(fmt.Sprintf("tensor.ConcatCols: row counts %d and %d differ", r, xr))
		}
	}
	return run(&concatFn{xs: xs, cols: true})
}

// ConcatRows stacks matrices with equal widths on top of each other.
func ConcatRows(xs ...mat.Tensor) mat.Tensor {
	_, c := Dims(xs[0])
	for _, x := range xs[1:] {
		if _, xc := Dims(x); xc != c {
			panic(fmt.Sprintf("tensor.ConcatRows: widths %d and %d differ", c, xc))
		}
	}
	return run(&concatFn{xs: xs})
}

func (f *concatFn) Operands() []mat.Tensor { return f.xs }

func (f *concatFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("Concat", f.xs...); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.xs[0])
	if f.cols {
		c = 0
		for _, x := range f.xs {
			_, xc := Dims(x)
			c += xc
		}
	} else {
		r = 0
		for _, x := range f.xs {
			xr, _ := Dims(x)
			r += xr
		}
	}
	out := zeroMatrix(r, c)
	Y := Data(out)
	off := 0
	for _, x := range f.xs {
		xr, xc := Dims(x)
		X := Data(x)
		if f.cols {
			for i := 0; i < r; i++ {
				copy(Y[i*c+off:i*c+off+xc], X[i*xc:(i+1)*xc])
			}
			off += xc
		} else {
			copy(Y[off:], X)
			off += xr * xc
		}
	}
	return wrap(out, f), nil
}

func (f *concatFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	G := Data(gy)
	_, c := Dims(gy)
	off := 0
	for _, x := range f.xs {
		xr, xc := Dims(x)
		if x.RequiresGrad() {
			gx := alloc(xr * xc)
			if f.cols {
				for i := 0; i < xr; i++ {
					copy(gx[i*xc:(i+1)*xc], G[i*c+off:i*c+off+xc])
				}
			} else {
				copy(gx, G[off:off+xr*xc])
			}
			accGrad(x, gx)
		}
		if f.cols {
			off += xc
		} else {
			off += xr * xc
		}
	}
	return nil
}

type sliceColsFn struct {
	x      mat.Tensor
	lo, hi int
	dt     devTemps
}

// SliceCols returns columns [lo, hi) of x as a new matrix (the q, k and v
// parts of a fused projection).
func SliceCols(x mat.Tensor, lo, hi int) mat.Tensor {
	if _, c := Dims(x); lo < 0 || hi > c || lo >= hi {
		panic(fmt.Sprintf("tensor.SliceCols: columns [%d, %d) of a matrix of %d", lo, hi, c))
	}
	return run(&sliceColsFn{x: x, lo: lo, hi: hi})
}

func (f *sliceColsFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *sliceColsFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("SliceCols", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	w := f.hi - f.lo
	out := rawMatrix(r, w) // every row written below
	X, Y := Data(f.x), Data(out)
	ParallelFor(r, max(1, 16384/max(1, w)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(Y[i*w:(i+1)*w], X[i*c+f.lo:i*c+f.hi])
		}
	})
	return wrap(out, f), nil
}

func (f *sliceColsFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	w := f.hi - f.lo
	G := Data(gy)
	gx := allocRaw(r * c) // every element written below
	ParallelFor(r, max(1, 16384/max(1, c)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			clear(gx[i*c : i*c+f.lo])
			copy(gx[i*c+f.lo:i*c+f.hi], G[i*w:(i+1)*w])
			clear(gx[i*c+f.hi : (i+1)*c])
		}
	})
	accGrad(f.x, gx)
	return nil
}

type gatherFn struct {
	x    mat.Tensor
	idx  []int
	dt   devTemps
	didx backend.Buffer
}

// Gather returns the rows idx[0], idx[1], ... of x as a new matrix
// (embedding lookup when x is a table; row selection otherwise). Its
// gradient scatter-adds into x in index order, so repeated indices sum in
// a fixed order. Indices out of range panic: callers validate token ids.
func Gather(x mat.Tensor, idx []int) mat.Tensor {
	r, _ := Dims(x)
	for p, i := range idx {
		if i < 0 || i >= r {
			panic(fmt.Sprintf("tensor.Gather: index %d (position %d) outside [0, %d)", i, p, r))
		}
	}
	return run(&gatherFn{x: x, idx: append([]int(nil), idx...)})
}

// SliceRows returns rows [lo, hi) of x.
func SliceRows(x mat.Tensor, lo, hi int) mat.Tensor {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return Gather(x, idx)
}

func (f *gatherFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *gatherFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("Gather", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	_, c := Dims(f.x)
	out := rawMatrix(len(f.idx), c) // every row written below
	X, Y := Data(f.x), Data(out)
	ParallelFor(len(f.idx), max(1, 16384/max(1, c)), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			i := f.idx[p]
			copy(Y[p*c:(p+1)*c], X[i*c:(i+1)*c])
		}
	})
	return wrap(out, f), nil
}

func (f *gatherFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	G := Data(gy)
	gx := allocRaw(r * c)
	// Split by columns, so every element still sums its rows in f.idx's
	// order whatever the split (a row split would race on repeated
	// indexes); the zeroing too, a large vocabulary's gradient being tens
	// of megabytes.
	ParallelFor(c, 16, func(lo, hi int) {
		for i := 0; i < r; i++ {
			clear(gx[i*c+lo : i*c+hi])
		}
		for p, i := range f.idx {
			dst, src := gx[i*c+lo:i*c+hi], G[p*c+lo:p*c+hi]
			for j, v := range src {
				dst[j] += v
			}
		}
	})
	accGrad(f.x, gx)
	return nil
}

type rowDotFn struct {
	a, b mat.Tensor
	dt   devTemps
}

// RowDot returns the [N, 1] column of row-wise inner products of a and b.
func RowDot(a, b mat.Tensor) mat.Tensor {
	mustSameShape("RowDot", a, b)
	return run(&rowDotFn{a: a, b: b})
}

func (f *rowDotFn) Operands() []mat.Tensor { return []mat.Tensor{f.a, f.b} }

func (f *rowDotFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("RowDot", f.a, f.b); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.a)
	out := zeroMatrix(r, 1)
	A, B, Y := Data(f.a), Data(f.b), Data(out)
	for i := 0; i < r; i++ {
		var s float32
		for j := i * c; j < (i+1)*c; j++ {
			s += A[j] * B[j]
		}
		Y[i] = s
	}
	return wrap(out, f), nil
}

func (f *rowDotFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	r, c := Dims(f.a)
	G := Data(gy)
	scaled := func(src []float32) []float32 {
		d := alloc(r * c)
		for i := 0; i < r; i++ {
			for j := i * c; j < (i+1)*c; j++ {
				d[j] = G[i] * src[j]
			}
		}
		return d
	}
	if f.a.RequiresGrad() {
		accGrad(f.a, scaled(Data(f.b)))
	}
	if f.b.RequiresGrad() {
		accGrad(f.b, scaled(Data(f.a)))
	}
	return nil
}
