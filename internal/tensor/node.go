package tensor

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
)

// Matrix is the concrete matrix type every operator produces and expects.
type Matrix = mat.Dense[float32]

// node is the value an operator's Forward returns: the result matrix plus
// the function that produced it. spago keeps an Operator's function
// private; carrying it in the value is what lets Backward walk the graph
// itself, in a fixed order.
type node struct {
	*Matrix
	fn ag.AutoGradFunction

	// dv holds a device-resident value (device.go); Matrix is then nil
	// until host code reads the value.
	dv      *devVal
	reqGrad bool // a device value's requires-grad flag

	mu    sync.Mutex
	grad  *Matrix
	dgrad *node // a device value's gradient, itself a device value
}

// ownedGrad marks a gradient matrix that its producer hands over: a node
// keeps it as its gradient instead of cloning it (spago's Dense.AccGrad
// clones every first contribution), which saves an allocation and a copy
// per intermediate gradient. It is a full Matrix, so parameters and other
// tensors accumulate it as usual.
type ownedGrad struct{ *Matrix }

// AccGrad sums g into the node's gradient (safe for concurrent use, as
// ag.Backward needs).
func (n *node) AccGrad(g mat.Tensor) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dv != nil || isDevGrad(g) {
		n.accGradDevice(g)
		return
	}
	if n.grad == nil {
		if o, ok := g.(ownedGrad); ok {
			n.grad = o.Matrix
			return
		}
		n.grad = g.(mat.Matrix).Clone().(*Matrix)
		return
	}
	addGrad(n.grad, g.(mat.Matrix))
	if o, ok := g.(ownedGrad); ok {
		free(mat.Data[float32](o.Matrix)) // added in: its buffer is free again
	}
}

// addGrad sums g into grad on both cores (spago's AddInPlace runs on one,
// and a tied embedding's gradient is tens of megabytes): grad[i] + g[i],
// one rounded sum per element as AddInPlace does.
func addGrad(grad *Matrix, g mat.Matrix) {
	r, c := Dims(grad)
	if gr, gc := Dims(g); gr != r || gc != c {
		grad.AddInPlace(g) // its shape error
		return
	}
	dst, src := mat.Data[float32](grad), mat.Data[float32](g)
	ParallelFor(len(dst), 1<<15, func(lo, hi int) {
		addInto(dst[lo:hi], dst[lo:hi], src[lo:hi])
	})
}

// isDevGrad reports whether g is a device-resident gradient.
func isDevGrad(g mat.Tensor) bool {
	d, ok := g.(*node)
	return ok && d.dv != nil
}

// accGradDevice is AccGrad where the value or the gradient is on a device
// (n.mu held): a device value keeps device gradients (a host one is
// uploaded, counted), a host value gets a device gradient downloaded.
func (n *node) accGradDevice(g mat.Tensor) {
	if n.dv == nil { // host value, device gradient
		d := g.(*node).dv
		h := allocRaw(d.rows * d.cols)
		d.dev.Download(h, d.buf, 0, "fallback: gradient of a host value from "+curOp())
		d.dev.Free(d.buf)
		m := mat.NewDense[float32](mat.WithShape(d.rows, d.cols), mat.WithBacking(h))
		if n.grad == nil {
			n.grad = m
			return
		}
		n.grad.AddInPlace(m)
		free(h)
		return
	}
	dev := n.dv.dev
	var gd *node
	if isDevGrad(g) {
		gd = g.(*node)
	} else { // a host gradient for a device value
		h := mat.Data[float32](g.(mat.Matrix))
		gd = &node{dv: newDevVal(dev, n.dv.rows, n.dv.cols)}
		dev.Upload(gd.dv.buf, 0, h, "fallback: host gradient of a device value from "+curOp())
		if o, ok := g.(ownedGrad); ok {
			free(mat.Data[float32](o.Matrix))
		}
	}
	if n.dgrad == nil {
		n.dgrad = gd
		return
	}
	dev.Add(n.dgrad.dv.buf, gd.dv.buf, n.dgrad.dv.buf)
	dev.Free(gd.dv.buf)
}

// Grad returns the accumulated gradient, nil when there is none.
func (n *node) Grad() mat.Tensor {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dgrad != nil {
		return n.dgrad
	}
	if n.grad == nil {
		return nil
	}
	return n.grad
}

// HasGrad reports whether a gradient has been accumulated.
func (n *node) HasGrad() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.grad != nil || n.dgrad != nil
}

// ZeroGrad drops the gradient.
func (n *node) ZeroGrad() {
	n.mu.Lock()
	n.grad = nil
	n.dgrad = nil
	n.mu.Unlock()
}

// run starts fn as a spago operator (synchronously: the operators
// parallelise internally, and a synchronous forward keeps graph creation
// order, which Backward relies on, equal to program order).
func run(fn ag.AutoGradFunction) *ag.Operator {
	setOp(fn)
	op := ag.NewOperator(fn).Run()
	clearOp()
	return op
}

// wrap packages an operator's result for Forward.
func wrap(m *Matrix, fn ag.AutoGradFunction) mat.Tensor {
	return &node{Matrix: m, fn: fn}
}

// New returns a rows x cols matrix holding data (copied when data is not
// nil; zeros otherwise). It is a constant: it requires no gradient.
func New(rows, cols int, data []float32) *Matrix {
	m := mat.NewDense[float32](mat.WithShape(rows, cols))
	if data != nil {
		if len(data) != rows*cols {
			panic(fmt.Sprintf("tensor.New: %d values for a %dx%d matrix", len(data), rows, cols))
		}
		copy(mat.Data[float32](m), data)
	}
	return m
}

// Zeros returns a rows x cols zero matrix.
func Zeros(rows, cols int) *Matrix { return mat.NewDense[float32](mat.WithShape(rows, cols)) }

// Data returns the float32 values of t, row-major, without copying.
func Data(t mat.Tensor) []float32 {
	switch v := t.(type) {
	case *Matrix:
		return mat.Data[float32](v)
	case *node:
		return mat.Data[float32](v.host())
	}
	if l := placedLeaf(t); l != nil {
		return l.hostData(t)
	}
	return mat.Data[float32](t.Value())
}

// GradData returns t's accumulated gradient values, or nil when it has
// none.
func GradData(t mat.Tensor) []float32 {
	if !t.HasGrad() {
		return nil
	}
	return Data(t.Grad())
}

// Dims returns the rows and columns of t. A one-dimensional tensor of n
// values counts as n x 1 (spago's convention).
func Dims(t mat.Tensor) (rows, cols int) {
	s := t.Shape()
	switch len(s) {
	case 1:
		return s[0], 1
	case 2:
		return s[0], s[1]
	}
	panic(fmt.Sprintf("tensor: unsupported shape %v", s))
}

// accGrad adds g (same shape as x's value, freshly allocated by the
// caller, which must not touch it afterwards) to x's gradient.
func accGrad(x mat.Tensor, g []float32) {
	if l := placedLeaf(x); l != nil { // a device-resident leaf: upload
		b := l.dv.dev.Alloc(max(len(g), 1))
		l.dv.dev.Upload(b, 0, g, "fallback: host gradient of a placed leaf from "+curOp())
		free(g)
		l.accGrad(b)
		return
	}
	m := mat.NewDense[float32](mat.WithShape(x.Shape()...), mat.WithBacking(g))
	if !isLeafParam(x) {
		x.AccGrad(ownedGrad{m})
		return
	}
	// A parameter (spago's Dense) clones its first contribution and adds
	// later ones: handedGrad makes that clone the buffer itself, so a
	// parameter's first gradient of a step costs no allocation and no copy.
	x.AccGrad(handedGrad{m})
	if gd := x.Grad(); gd == nil || !sameBuffer(mat.Data[float32](gd), g) {
		free(g) // added in: its buffer is free again
	}
}

// handedGrad is a gradient handed over to a leaf whose AccGrad clones the
// first contribution (spago's Dense.AccGrad: grad.Clone() when it has no
// gradient yet): its Clone returns the matrix itself, so the leaf keeps
// the caller's buffer. The values are the same as with a copy. Only
// accGrad makes one, for a buffer it gives up.
type handedGrad struct{ *Matrix }

// Clone returns the matrix itself (see handedGrad).
func (h handedGrad) Clone() mat.Matrix { return h.Matrix }

// sameBuffer reports whether a and b start at the same element.
func sameBuffer(a, b []float32) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// ReleaseGrad drops t's gradient, as ZeroGrad does, and hands its buffer
// back for reuse by later steps when it came from this package's free
// lists (a parameter keeps the first gradient an operator gives it). Call
// it only when nothing still reads the gradient: the optimiser, after its
// update.
func ReleaseGrad(t mat.Tensor) {
	if !isLeafParam(t) || placedLeaf(t) != nil || !t.HasGrad() {
		t.ZeroGrad()
		return
	}
	g, ok := t.Grad().(*Matrix)
	t.ZeroGrad()
	if ok {
		free(mat.Data[float32](g))
	}
}

// Backward back-propagates from root: a scalar root gets gradient 1, any
// other root must already hold its output gradient (AccGrad). Operators
// run one at a time in reverse creation order, so gradients are summed in
// a fixed order and results are bit-reproducible. Gradients are summed
// into the existing gradients of leaves (parameters, inputs that require
// gradients); the gradients of intermediate operators are released once
// propagated to keep peak memory down.
func Backward(root mat.Tensor) error {
	rop, ok := root.(*ag.Operator)
	if !ok {
		return nil // a leaf: nothing to propagate
	}
	if !rop.RequiresGrad() {
		return nil
	}
	order := topoOrder(rop)
	if !rop.HasGrad() {
		if rop.Size() != 1 {
			return fmt.Errorf("tensor.Backward: root is %v, not a scalar, and has no output gradient", rop.Shape())
		}
		if v := devOf(rop); v != nil {
			one := &node{dv: newDevVal(v.dev, 1, 1)}
			v.dev.Fill(one.dv.buf, 1)
			rop.AccGrad(one)
		} else {
			rop.AccGrad(New(1, 1, []float32{1}))
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		op := order[i]
		if !op.RequiresGrad() || !op.HasGrad() {
			continue
		}
		n, ok := op.Value().(*node)
		if !ok {
			return fmt.Errorf("tensor.Backward: operator with value %T was not built by package tensor; use tensor's operators throughout a graph", op.Value())
		}
		g := op.Grad()
		setOp(n.fn)
		if err := n.fn.Backward(g); err != nil {
			return err
		}
		clearOp()
		op.ZeroGrad()
		recycleGrad(g) // propagated: no operator keeps its output gradient
	}
	return nil
}

// topoOrder returns the operators reachable from root in post-order (every
// operator after its operands), visiting operands in their listed order.
func topoOrder(root *ag.Operator) []*ag.Operator {
	seen := map[*ag.Operator]bool{}
	var order []*ag.Operator
	type frame struct {
		op   *ag.Operator
		next int
	}
	stack := []frame{{op: root}}
	seen[root] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		ops := top.op.Operands()
		if top.next < len(ops) {
			child, ok := ops[top.next].(*ag.Operator)
			top.next++
			if ok && !seen[child] {
				seen[child] = true
				stack = append(stack, frame{op: child})
			}
			continue
		}
		order = append(order, top.op)
		stack = stack[:len(stack)-1]
	}
	return order
}

// ParallelFor calls f on consecutive ranges covering [0, n), concurrently,
// in ranges of at least grain indexes (n <= grain runs inline). Callers must
// make each index's result independent of the split (no cross-range
// reductions), which keeps results independent of the number of
// goroutines.
func ParallelFor(n, grain int, f func(lo, hi int)) {
	if grain < 1 {
		grain = 1
	}
	workers := runtime.GOMAXPROCS(0)
	if w := (n + grain - 1) / grain; w < workers {
		workers = w
	}
	if workers <= 1 {
		if n > 0 {
			f(0, n)
		}
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

// colSums returns the sum over rows of each column of the rows x cols
// matrix g, each column summed in row order from +0 (parallel over
// columns): the bias gradients. Where the CPU has AVX2, colSumsVec sums
// eight columns a lane each with the same chain of rounded additions, so
// the bits do not depend on the path (TestColSumsBits).
func colSums(g []float32, rows, cols int) []float32 {
	out := alloc(cols)
	ParallelFor(cols, 64, func(lo, hi int) {
		if colSumsVec != nil && rows > 0 && hi-lo >= 8 {
			n := (hi - lo) &^ 7
			colSumsVec(&out[lo], &g[lo], rows, n, cols)
			lo += n
		}
		acc := out[lo:hi]
		for i := 0; i < rows; i++ {
			row := g[i*cols+lo : i*cols+hi]
			for j, v := range row {
				acc[j] += v
			}
		}
	})
	return out
}

// colSumsVec, where the CPU has AVX2, sets out[j] to column j's sum over
// rows (colSums' chain) for j < n, n a positive multiple of 8, the rows
// ld apart.
var colSumsVec func(out, g *float32, rows, n, ld int)

func mustSameShape(op string, a, b mat.Tensor) {
	ar, ac := Dims(a)
	br, bc := Dims(b)
	if ar != br || ac != bc {
		panic(fmt.Sprintf("tensor.%s: shapes %dx%d and %dx%d differ", op, ar, ac, br, bc))
	}
}
