package tensor

import (
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
)

// Buffer reuse. A training step allocates its activations, operator
// scratch and gradients afresh (about 1 GB for the reference step), and
// the same sizes come back step after step. Operators take their buffers
// from free lists by size class (alloc, allocRaw); Backward returns each
// intermediate gradient once it has been propagated, and Release returns a
// finished step's activations and scratch. The free lists are sync.Pools,
// so what a process stops using goes back to the garbage collector after
// two collections. Reuse changes no value: a buffer is either zeroed when
// handed out or fully written before it is read.

// Size classes: powers of two split in eight steps (at most 12.5% unused),
// exact below 64 values.
const (
	classSteps   = 8
	minPooledLen = 64
)

var classPools sync.Map // class capacity (int) -> *sync.Pool of unsafe.Pointer

// classCap returns the capacity of n's size class.
func classCap(n int) int {
	if n <= minPooledLen {
		return n
	}
	// Round n up to the next multiple of 2^(e-3), where 2^e <= n-1 < 2^(e+1).
	e := bits.Len(uint(n-1)) - 1
	step := 1 << max(e-3, 0)
	return (n + step - 1) / step * step
}

func poolOf(c int) *sync.Pool {
	if p, ok := classPools.Load(c); ok {
		return p.(*sync.Pool)
	}
	p, _ := classPools.LoadOrStore(c, &sync.Pool{})
	return p.(*sync.Pool)
}

// allocRaw returns n float32s whose contents are unspecified: for callers
// that write every element before reading any.
func allocRaw(n int) []float32 {
	b := allocClass(n)
	if poisonRaw {
		for i := range b {
			b[i] = float32(math.NaN())
		}
	}
	return b
}

// poisonRaw, set by tests, makes allocRaw fill what it returns with NaNs,
// so an operator that reads an element it did not write shows it.
var poisonRaw bool

func allocClass(n int) []float32 {
	if n < minPooledLen {
		return make([]float32, n)
	}
	c := classCap(n)
	if p := poolOf(c).Get(); p != nil {
		return unsafe.Slice((*float32)(p.(unsafe.Pointer)), c)[:n]
	}
	return make([]float32, n, c)
}

// alloc returns n zeros.
func alloc(n int) []float32 {
	b := allocClass(n)
	clear(b)
	return b
}

// free hands b back for reuse; the caller must hold no other reference to
// it. Buffers whose capacity is not a size class (made elsewhere) are left
// to the garbage collector.
func free(b []float32) {
	c := cap(b)
	if c < minPooledLen || classCap(c) != c {
		return
	}
	poolOf(c).Put(unsafe.Pointer(unsafe.SliceData(b[:1])))
}

// rawMatrix and zeroMatrix are Zeros backed by the free lists.
func rawMatrix(rows, cols int) *Matrix {
	return mat.NewDense[float32](mat.WithShape(rows, cols), mat.WithBacking(allocRaw(rows*cols)))
}

func zeroMatrix(rows, cols int) *Matrix {
	return mat.NewDense[float32](mat.WithShape(rows, cols), mat.WithBacking(alloc(rows*cols)))
}

// scratchHolder is an operator that keeps buffers from its forward pass
// for its backward pass (probabilities, masks, normalised inputs).
type scratchHolder interface {
	scratch() [][]float32
}

// Release hands the buffers of the graph under root back for reuse: the
// values of every operator built by this package, and the scratch they kept
// for the backward pass. Call it when the step is over (after Backward and
// the optimiser's update) and nothing still reads a value of the graph:
// parameters and other leaves are not touched, but an operator's value is
// gone afterwards (reading it panics) and slices obtained from it with Data
// will be overwritten by later steps.
func Release(root mat.Tensor) {
	rop, ok := root.(*ag.Operator)
	if !ok {
		return
	}
	seen := map[*float32]bool{}
	put := func(b []float32) {
		if cap(b) == 0 {
			return
		}
		p := unsafe.SliceData(b[:1])
		if seen[p] {
			return
		}
		seen[p] = true
		free(b)
	}
	for _, op := range topoOrder(rop) {
		n, ok := op.Value().(*node)
		if !ok || (n.Matrix == nil && n.dv == nil) {
			continue
		}
		if s, ok := n.fn.(devScratchHolder); ok && s.temps().dev != nil {
			s.temps().release()
		}
		if n.dv != nil {
			n.dv.dev.Free(n.dv.buf)
			n.dv = nil
			if n.Matrix == nil { // never read on the host
				n.fn = nil
				continue
			}
		}
		if s, ok := n.fn.(scratchHolder); ok {
			for _, b := range s.scratch() {
				put(b)
			}
		}
		put(mat.Data[float32](n.Matrix))
		n.Matrix = nil
		n.fn = nil
	}
}

// recycleGrad returns a gradient matrix that no one else holds.
func recycleGrad(g mat.Tensor) {
	if n, ok := g.(*node); ok && n.dv != nil {
		n.dv.dev.Free(n.dv.buf)
		n.dv = nil
		return
	}
	if m, ok := g.(*Matrix); ok {
		free(mat.Data[float32](m))
	}
}

// isLeafParam reports whether x copies or adds a gradient it is given
// instead of keeping it (spago's Dense and Param clone the first
// contribution), so the buffer can be reused at once.
func isLeafParam(x mat.Tensor) bool {
	switch x.(type) {
	case *Matrix, *nn.Param:
		return true
	}
	return false
}

// The operators that keep forward-pass buffers for their backward pass.
func (f *attentionFn) scratch() [][]float32    { return [][]float32{f.probs, f.drop} }
func (f *geluFn) scratch() [][]float32         { return [][]float32{f.cdf} }
func (f *geluTanhFn) scratch() [][]float32     { return [][]float32{f.t} }
func (f *dropoutFn) scratch() [][]float32      { return [][]float32{f.mask} }
func (f *layerNormFn) scratch() [][]float32    { return [][]float32{f.xhat, f.rstd} }
func (f *rmsNormFn) scratch() [][]float32      { return [][]float32{f.xhat, f.rstd} }
func (f *l2NormFn) scratch() [][]float32       { return [][]float32{f.norm} }
func (f *crossEntropyFn) scratch() [][]float32 { return [][]float32{f.probs} }
