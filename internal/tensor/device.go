package tensor

// Device-resident tensors: the design.
//
// Where memory lives. A value of the autograd graph lives either in host
// memory (a *Matrix, a Go []float32, as always) or in device memory: a
// backend.Buffer that a backend.Device allocated, a handle the host cannot
// read. A device value is a *node whose dv field holds the buffer and the
// shape; its Matrix stays nil until host code asks for the values. Leaves
// (parameters) are made device-resident explicitly with Place, which
// uploads each once; from then on the device copy is the master and the
// host copy is stale until Fetch (or a host read, which downloads and is
// counted). Gradients follow their values: a device value's gradient is a
// device buffer (a device *node, what Grad returns), and a placed leaf's
// gradient stays on the device (DeviceGrad) for the optimiser.
//
// Who owns it. The Device owns its memory (Alloc, Free); package tensor
// owns every buffer it allocated for a graph: an operator's output, the
// scratch it keeps for its backward pass (xhat, masks, probabilities), the
// temporary uploads of host operands. Release frees them, as it returns
// host buffers to the pools today: the arena maps one to one (rawMatrix /
// alloc become Device.Alloc, free becomes Device.Free, scratch() has its
// device twin devTemps). Intermediate gradients are freed by Backward once
// propagated, as on the host. Placed leaves, their gradients and the
// optimiser's moments live until Unplace (and optim's Release). Small
// integer inputs (token ids, positions, lengths) are uploaded through a
// per-device cache keyed by content, so an array used by every layer, or
// unchanged between steps (positions), crosses once; entries in use by a
// graph are pinned until its Release.
//
// When copies happen. Only at explicit points, each counted by the device
// (backend.Copies, by label):
//   - Place / Fetch / Unplace (weights: once per run);
//   - the integer inputs of Gather, MeanPool, Attention, CrossEntropy and
//     BucketBias (token ids, lengths, targets, buckets) and the float
//     inputs of losses (MSE targets): the batch; leaves left in host
//     memory (a loss's constant mask, a parameter not placed) are
//     uploaded for each operator that reads them, labelled as such;
//   - Data / Item on a device value: the host asks (the logged loss);
//   - fallback, where an operator has no device path yet: it reads its
//     device operands with Data (downloads), computes on the host, and
//     its host result is uploaded by the next device operator that uses
//     it; its gradient crosses back the same way. Nothing silently
//     breaks: the step is correct and the counter names the operator
//     ("host read: *tensor.crossEntropyFn", "host operand: ...").
// Operators dispatch on their operands: when any operand is
// device-resident, an operator with a device path runs its kernels on the
// device (backend.Device: C bodies of cuda/ptx/kernels.h, GEMMs) and its
// result is a device value; host operands are uploaded (counted) for it.
// The current backend plays no part in that choice: a graph is on the
// device because its leaves were placed there.
//
// Bit-identical results. Every device kernel mirrors the operator's own Go
// loop operation by operation (the C bodies, compiled without fused
// multiply-adds, checked bit for bit by package backend/cuda/ptx/emu), the
// buffers are allocated and zeroed exactly where the host code allocates
// and zeroes, gradients are summed in Backward's one order, and dropout
// draws the same numbers: the mask kernel computes draw k of the caller's
// math/rand/v2 PCG by jump-ahead from its state, and the host generator is
// advanced past the draws, so later host draws agree too. The GEMMs are
// the backend's: in emulation the CPU's sgemm on the same operands, hence
// the CPU's bits; on a GPU cuBLAS, which agrees to about 1e-6 relative
// per product (the stated tolerance of a GPU run: 1e-4 on losses and
// weights after three steps, as the CUDA backend's tests).
//
// Where the host calls math.Exp or math.Log (cross-entropy, the softmax
// rows, tanh) the kernels compute Go's amd64 functions (exp_amd64.s,
// log_amd64.s transcribed), on the FMA path exactly when the host's
// math.Exp takes it (backend.GoExpFMA); float64 sums the host runs in
// order (a loss over rows, Sum, the clipping norm) run in one device
// thread in that order.
//
// What has a device path: Gather, Add, Sub, Mul, Scale, Abs, Tanh, MatMul,
// Linear, Affine, ConcatCols, ConcatRows, SliceCols, RowDot, LayerNorm,
// RMSNorm, L2Normalize, GELU, GELUTanh, ReLU, Dropout, Softmax,
// LogSoftmax, Sum, Mean, MeanPool, MSE, CrossEntropy, BucketBias,
// Attention (masks, causal, dropout, a score bias shared or per sequence;
// the one-query decoding path with the CPU's dot products), AdamW and
// gradient clipping by global norm (optim); and the decoding operators of
// decode_device.go (GatherAt, DecodeAttention against a cache in device
// memory, DecodeBucketBias, DrawTokens), with which a generation session
// keeps its caches, positions and logits on the device and a step copies
// only token ids. An operator without a device path would fall back,
// counted.

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/mat/float"

	"repro/internal/tensor/backend"
)

// devVal is a value in device memory: rows x cols float32 in buf.
type devVal struct {
	dev        backend.Device
	buf        backend.Buffer
	rows, cols int
}

func newDevVal(dev backend.Device, rows, cols int) *devVal {
	return &devVal{dev: dev, buf: dev.Alloc(max(rows*cols, 1)), rows: rows, cols: cols}
}

// devices counts what is device-resident (placed leaves and device
// values ever made); while it is 0 the host path does no device
// bookkeeping at all.
var devices atomic.Int64

// opLabel names the operator running now, for the copy counter's labels
// (a diagnostic: concurrent graphs may mislabel each other's copies).
var opLabel atomic.Pointer[string]

func setOp(fn ag.AutoGradFunction) {
	if devices.Load() == 0 {
		return
	}
	s := fmt.Sprintf("%T", fn)
	opLabel.Store(&s)
}

// clearOp ends setOp's operator: reads after it are the caller's.
func clearOp() {
	if devices.Load() == 0 {
		return
	}
	opLabel.Store(nil)
}

// readLabel labels a download of a device value: by the caller (the
// logged loss), or by an operator without a device path (a fallback).
func readLabel() string {
	if p := opLabel.Load(); p != nil {
		return "fallback: read by " + *p
	}
	return "read by the caller"
}

func curOp() string {
	if p := opLabel.Load(); p != nil {
		return *p
	}
	return "caller"
}

// devTemps holds the device buffers an operator keeps until Release: its
// scratch for the backward pass and the uploads of its host operands.
type devTemps struct {
	dev   backend.Device
	bufs  []backend.Buffer
	cache []*intEntry // pinned integer inputs
}

func (t *devTemps) keep(b backend.Buffer) backend.Buffer {
	t.bufs = append(t.bufs, b)
	return b
}

func (t *devTemps) release() {
	for _, b := range t.bufs {
		t.dev.Free(b)
	}
	t.bufs = nil
	for _, e := range t.cache {
		e.unpin()
	}
	t.cache = nil
}

type devScratchHolder interface{ temps() *devTemps }

// wrapDev packages a device result for Forward.
func wrapDev(v *devVal, fn ag.AutoGradFunction) mat.Tensor {
	return &node{dv: v, fn: fn}
}

// devOf returns x's device value, nil when x lives in host memory.
func devOf(x mat.Tensor) *devVal {
	switch v := x.(type) {
	case *ag.Operator:
		if n, ok := v.Value().(*node); ok {
			return n.dv
		}
		return nil
	case *node:
		return v.dv
	}
	if l := placedLeaf(x); l != nil {
		return &l.dv
	}
	return nil
}

// deviceOf returns the device of the device-resident operands, nil when
// all are in host memory; operands on two devices panic.
func deviceOf(op string, xs ...mat.Tensor) backend.Device {
	if devices.Load() == 0 {
		return nil
	}
	var dev backend.Device
	for _, x := range xs {
		if x == nil {
			continue
		}
		if v := devOf(x); v != nil {
			if dev != nil && dev != v.dev {
				panic(fmt.Sprintf("tensor.%s: operands on two devices (%s and %s)", op, dev.Name(), v.dev.Name()))
			}
			dev = v.dev
		}
	}
	return dev
}

// operand returns x's device buffer, uploading a host x (counted) into a
// temporary that t frees at Release: an operator's host value (one without
// a device path: a fallback), or a leaf in host memory (a constant such as
// a loss's mask, or a parameter not placed), labelled apart.
func (t *devTemps) operand(x mat.Tensor) backend.Buffer {
	if v := devOf(x); v != nil {
		return v.buf
	}
	why := "fallback: host operand of " + curOp()
	if _, ok := x.(*ag.Operator); !ok {
		why = "host leaf (a constant, or a parameter not placed) into " + curOp()
	}
	d := Data(x)
	b := t.dev.Alloc(max(len(d), 1))
	t.dev.Upload(b, 0, d, why)
	return t.keep(b)
}

// gradIn returns the device buffer of an output gradient gy: a device
// gradient as it is, a host one uploaded (counted) into a temporary.
func (t *devTemps) gradIn(gy mat.Tensor) backend.Buffer {
	if n, ok := gy.(*node); ok && n.dv != nil {
		return n.dv.buf
	}
	d := Data(gy)
	b := t.dev.Alloc(max(len(d), 1))
	t.dev.Upload(b, 0, d, "fallback: host gradient into "+curOp())
	return t.keep(b)
}

// accGradDev adds the device gradient g (rows x cols, handed over: the
// callee keeps or frees it) to x's gradient.
func accGradDev(dev backend.Device, x mat.Tensor, g backend.Buffer, rows, cols int) {
	if l := placedLeaf(x); l != nil {
		l.accGrad(g)
		return
	}
	if n, ok := x.(*node); ok && n.dv != nil {
		n.AccGrad(&node{dv: &devVal{dev: dev, buf: g, rows: rows, cols: cols}})
		return
	}
	if op, ok := x.(*ag.Operator); ok {
		if _, ok := op.Value().(*node); ok {
			op.AccGrad(&node{dv: &devVal{dev: dev, buf: g, rows: rows, cols: cols}})
			return
		}
	}
	// A host leaf (a constant, a parameter not placed): its gradient
	// comes back to the host.
	h := allocRaw(rows * cols)
	dev.Download(h, g, 0, "fallback: gradient of a host operand of "+curOp())
	dev.Free(g)
	accGrad(x, h)
}

// host returns the node's values in host memory, downloading a device
// value once (counted).
func (n *node) host() *Matrix {
	if n.dv == nil {
		return n.Matrix
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.Matrix == nil {
		m := rawMatrix(n.dv.rows, n.dv.cols)
		n.dv.dev.Download(mat.Data[float32](m), n.dv.buf, 0, readLabel())
		n.Matrix = m
	}
	return n.Matrix
}

// The mat.Tensor methods a device value answers itself (its Matrix is nil
// until read); for host values they are the Matrix's.

func (n *node) Shape() []int {
	if n.dv == nil {
		return n.Matrix.Shape()
	}
	return []int{n.dv.rows, n.dv.cols}
}

func (n *node) Dims() int {
	if n.dv == nil {
		return n.Matrix.Dims()
	}
	return 2
}

func (n *node) Size() int {
	if n.dv == nil {
		return n.Matrix.Size()
	}
	return n.dv.rows * n.dv.cols
}

func (n *node) Data() float.Slice { return n.host().Data() }

func (n *node) Item() float.Float { return n.host().Item() }

func (n *node) At(indices ...int) mat.Tensor { return n.host().At(indices...) }

func (n *node) SetAt(m mat.Tensor, indices ...int) {
	if n.dv != nil {
		panic("tensor: SetAt on a device-resident value")
	}
	n.Matrix.SetAt(m, indices...)
}

func (n *node) Value() mat.Tensor {
	if n.dv == nil {
		return n.Matrix.Value()
	}
	return n
}

func (n *node) RequiresGrad() bool {
	if n.dv == nil {
		return n.Matrix.RequiresGrad()
	}
	return n.reqGrad
}

func (n *node) SetRequiresGrad(v bool) {
	if n.dv == nil {
		n.Matrix.SetRequiresGrad(v)
		return
	}
	n.reqGrad = v
}

// Placed leaves.

// leafDev is a leaf's device copy and its device gradient.
type leafDev struct {
	dv    devVal
	mu    sync.Mutex
	grad  backend.Buffer // nil: no gradient
	stale bool           // the host copy is older than the device copy
}

var placed sync.Map // mat.Tensor (leaf) -> *leafDev

func placedLeaf(x mat.Tensor) *leafDev {
	if devices.Load() == 0 {
		return nil
	}
	switch x.(type) {
	case *ag.Operator, *node:
		return nil
	}
	if l, ok := placed.Load(x); ok {
		return l.(*leafDev)
	}
	return nil
}

func (l *leafDev) accGrad(g backend.Buffer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.grad == nil {
		l.grad = g
		return
	}
	l.dv.dev.Add(l.grad, g, l.grad)
	l.dv.dev.Free(g)
}

// hostData returns the leaf's host values, downloading them first when
// the device copy changed (counted).
func (l *leafDev) hostData(x mat.Tensor) []float32 {
	d := mat.Data[float32](x.Value())
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stale {
		why := "read of a placed leaf by the caller"
		if p := opLabel.Load(); p != nil {
			why = "fallback: read of a placed leaf by " + *p
		}
		l.dv.dev.Download(d, l.dv.buf, 0, why)
		l.stale = false
	}
	return d
}

// Place makes leaves (parameters, constant inputs) device-resident on dev:
// each is uploaded once (counted as "place") and operators read the device
// copy from now on. The host copy goes stale as the device copy is updated
// (MarkDeviceChanged); Fetch brings it back. Placing a placed leaf again
// re-uploads it.
func Place(dev backend.Device, leaves ...mat.Tensor) {
	for _, x := range leaves {
		switch x.(type) {
		case *ag.Operator, *node:
			panic(fmt.Sprintf("tensor.Place: %T is not a leaf", x))
		}
		d := mat.Data[float32](x.Value())
		r, c := Dims(x)
		if l := placedLeaf(x); l != nil {
			if l.dv.dev != dev {
				panic("tensor.Place: already placed on another device")
			}
			dev.Upload(l.dv.buf, 0, d, "place")
			l.stale = false
			continue
		}
		devices.Add(1)
		l := &leafDev{dv: *newDevVal(dev, r, c)}
		dev.Upload(l.dv.buf, 0, d, "place")
		placed.Store(x, l)
	}
}

// Fetch copies the device values of placed leaves into their host memory
// (counted as "fetch"); leaves that are not placed are left alone.
func Fetch(leaves ...mat.Tensor) {
	for _, x := range leaves {
		if l := placedLeaf(x); l != nil {
			l.mu.Lock()
			l.dv.dev.Download(mat.Data[float32](x.Value()), l.dv.buf, 0, "fetch")
			l.stale = false
			l.mu.Unlock()
		}
	}
}

// Unplace fetches placed leaves and frees their device copies and device
// gradients (a device gradient not yet used is dropped).
func Unplace(leaves ...mat.Tensor) {
	Fetch(leaves...)
	for _, x := range leaves {
		if l := placedLeaf(x); l != nil {
			placed.Delete(x)
			l.mu.Lock()
			if l.grad != nil {
				l.dv.dev.Free(l.grad)
				l.grad = nil
			}
			l.dv.dev.Free(l.dv.buf)
			l.mu.Unlock()
			devices.Add(-1)
		}
	}
}

// DeviceValue returns a placed leaf's device and buffer.
func DeviceValue(x mat.Tensor) (backend.Device, backend.Buffer, bool) {
	if l := placedLeaf(x); l != nil {
		return l.dv.dev, l.dv.buf, true
	}
	return nil, nil, false
}

// DeviceGrad returns a placed leaf's device gradient (false when it has
// none).
func DeviceGrad(x mat.Tensor) (backend.Buffer, bool) {
	if l := placedLeaf(x); l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.grad, l.grad != nil
	}
	return nil, false
}

// ZeroDeviceGrad drops a placed leaf's device gradient (freeing it).
func ZeroDeviceGrad(x mat.Tensor) {
	if l := placedLeaf(x); l != nil {
		l.mu.Lock()
		if l.grad != nil {
			l.dv.dev.Free(l.grad)
			l.grad = nil
		}
		l.mu.Unlock()
	}
}

// MarkDeviceChanged records that a placed leaf's device copy was updated
// (by the optimiser): a host read downloads it first.
func MarkDeviceChanged(x mat.Tensor) {
	if l := placedLeaf(x); l != nil {
		l.mu.Lock()
		l.stale = true
		l.mu.Unlock()
	}
}

// Integer inputs on the device: a small cache per device, keyed by
// content.

type intEntry struct {
	dev   backend.Device
	vals  []int32
	buf   backend.Buffer
	users int // graphs holding it (pinned while > 0)
	used  uint64
}

func (e *intEntry) unpin() {
	intMu.Lock()
	e.users--
	intMu.Unlock()
}

const intCacheSize = 32

var (
	intMu    sync.Mutex
	intCache = map[backend.Device][]*intEntry{}
	intClock uint64
)

// ints returns xs as int32 on the device, pinned for t's graph: from the
// cache when the same values were uploaded before, else uploaded (counted
// under why) into an entry that evicts the least recently used unpinned
// one when the cache is full.
func (t *devTemps) ints(xs []int, why string) backend.Buffer {
	vals := make([]int32, len(xs))
	for i, x := range xs {
		vals[i] = int32(x)
	}
	intMu.Lock()
	defer intMu.Unlock()
	intClock++
	entries := intCache[t.dev]
	for _, e := range entries {
		if slicesEqual(e.vals, vals) {
			e.users++
			e.used = intClock
			t.cache = append(t.cache, e)
			return e.buf
		}
	}
	if len(entries) >= intCacheSize {
		victim := -1
		for i, e := range entries {
			if e.users == 0 && (victim < 0 || e.used < entries[victim].used) {
				victim = i
			}
		}
		if victim >= 0 {
			t.dev.Free(entries[victim].buf)
			entries = append(entries[:victim], entries[victim+1:]...)
		}
	}
	e := &intEntry{dev: t.dev, vals: vals, buf: t.dev.Alloc(max(len(vals), 1)), users: 1, used: intClock}
	t.dev.UploadInts(e.buf, 0, vals, why)
	intCache[t.dev] = append(entries, e)
	t.cache = append(t.cache, e)
	return e.buf
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// DropIntCache frees the device's cached integer inputs that no graph
// holds (for a device about to be closed, and for tests counting live
// buffers).
func DropIntCache(dev backend.Device) {
	intMu.Lock()
	defer intMu.Unlock()
	var keep []*intEntry
	for _, e := range intCache[dev] {
		if e.users > 0 {
			keep = append(keep, e)
			continue
		}
		dev.Free(e.buf)
	}
	intCache[dev] = keep
}

// Dropout on the device: the caller's generator, drawn by jump-ahead.

// randSource reports whether rand.Rand is the one-field struct {src
// Source} this code reads the source of; if a Go release changes that, the
// device path falls back to drawing the mask on the host.
var randSource = func() bool {
	t := reflect.TypeOf(rand.Rand{})
	return t.NumField() == 1 && t.Field(0).Type == reflect.TypeOf((*rand.Source)(nil)).Elem()
}()

// pcgOf returns r's source when it is a *rand.PCG.
func pcgOf(r *rand.Rand) *rand.PCG {
	if !randSource || r == nil {
		return nil
	}
	src := *(*rand.Source)(unsafe.Pointer(r))
	p, _ := src.(*rand.PCG)
	return p
}

// pcgState returns the PCG's state (hi, lo).
func pcgState(p *rand.PCG) (hi, lo uint64) {
	b, err := p.MarshalBinary()
	if err != nil || len(b) != 20 || !strings.HasPrefix(string(b), "pcg:") {
		panic(fmt.Sprintf("tensor: unexpected PCG encoding %q (%v)", b, err))
	}
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(b[4+i])
		lo = lo<<8 | uint64(b[12+i])
	}
	return hi, lo
}

// pcgAdvance returns the PCG state delta steps after (hi, lo): Brown's
// jump-ahead for state = state*mul + inc mod 2^128, as the kernel's
// k_pcg_advance.
func pcgAdvance(hi, lo, delta uint64) (uint64, uint64) {
	mul128 := func(ah, al, bh, bl uint64) (uint64, uint64) {
		h, l := bits.Mul64(al, bl)
		return h + ah*bl + al*bh, l
	}
	add128 := func(ah, al, bh, bl uint64) (uint64, uint64) {
		l, c := bits.Add64(al, bl, 0)
		h, _ := bits.Add64(ah, bh, c)
		return h, l
	}
	mh, ml := uint64(2549297995355413924), uint64(4865540595714422341)
	ph, pl := uint64(6364136223846793005), uint64(1442695040888963407)
	var amh, aml, aph, apl uint64 = 0, 1, 0, 0
	for delta > 0 {
		if delta&1 == 1 {
			amh, aml = mul128(amh, aml, mh, ml)
			th, tl := mul128(aph, apl, mh, ml)
			aph, apl = add128(th, tl, ph, pl)
		}
		m1h, m1l := add128(mh, ml, 0, 1)
		ph, pl = mul128(m1h, m1l, ph, pl)
		mh, ml = mul128(mh, ml, mh, ml)
		delta >>= 1
	}
	sh, sl := mul128(amh, aml, hi, lo)
	return add128(sh, sl, aph, apl)
}

// deviceDropoutMask returns n dropout multipliers on dev, the same that
// dropoutMask(rng, n, p) would draw, leaving rng where dropoutMask leaves
// it. With a generator other than a PCG the mask is drawn on the host and
// uploaded (counted).
func (t *devTemps) dropoutMask(rng *rand.Rand, n int, p float32) backend.Buffer {
	m := t.keep(t.dev.Alloc(max(n, 1)))
	pcg := pcgOf(rng)
	if pcg == nil {
		h := dropoutMask(rng, n, p)
		t.dev.Upload(m, 0, h, "fallback: dropout mask drawn on the host (the generator is not a PCG)")
		free(h)
		return m
	}
	keep := 1 / (1 - p)
	thr := uint32(float64(p) * (1 << 32))
	hi, lo := pcgState(pcg)
	t.dev.DropoutMask(m, thr, keep, hi, lo)
	pcg.Seed(pcgAdvance(hi, lo, uint64((n+1)/2)))
	return m
}

// Upload returns a rows x cols constant (no gradient) on dev holding data
// (counted as "upload").
func Upload(dev backend.Device, rows, cols int, data []float32) mat.Tensor {
	if len(data) != rows*cols {
		panic(fmt.Sprintf("tensor.Upload: %d values for a %dx%d matrix", len(data), rows, cols))
	}
	v := newDevVal(dev, rows, cols)
	dev.Upload(v.buf, 0, data, "upload")
	devices.Add(1)
	return &node{dv: v}
}
