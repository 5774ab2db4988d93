package backend

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Buffer is memory on a Device: a handle the device hands out, never a Go
// slice the host can read. Its elements are 4 bytes wide (float32 or
// int32, as the kernel that reads it says). Only the Device that allocated
// it may be given it back.
type Buffer interface {
	// Len is the number of 4-byte elements.
	Len() int
}

// Device is memory apart from the host's plus the kernels that work on it:
// what a backend offers when tensors can live on it (see the design in
// internal/tensor/device.go). Every copy between host and device memory
// goes through Upload or Download and is counted (Copies): nothing else
// moves data across.
//
// Kernels take Buffers and sizes; they panic on sizes that disagree with
// the buffers (a programming error in the calling operator, as for
// Sgemm). Each kernel computes exactly what the operator's own Go loop
// computes (the C bodies in cuda/ptx/kernels.h), except the GEMMs, whose
// bits are the implementation's (the CPU kernel in emulation, cuBLAS on a
// GPU).
type Device interface {
	// Name names the device ("emu", "cuda:0 (NVIDIA H100 ...)").
	Name() string

	// Alloc returns n zeroed elements of device memory (n >= 1).
	Alloc(n int) Buffer
	// Free returns b to the device's allocator; b must not be used again.
	Free(b Buffer)
	// Upload copies src into dst[off:]; why says what it is for (the
	// counter's label).
	Upload(dst Buffer, off int, src []float32, why string)
	// UploadInts is Upload for int32 data (indices, lengths).
	UploadInts(dst Buffer, off int, src []int32, why string)
	// Download copies src[off:off+len(dst)] into dst.
	Download(dst []float32, src Buffer, off int, why string)
	// Copies reports every host<->device copy so far.
	Copies() Copies

	// Fill sets every element of x to v (a float32 bit pattern).
	Fill(x Buffer, v float32)
	// Copy copies src into dst (equal lengths), device to device.
	Copy(dst, src Buffer)

	// Gemm is Backend.Sgemm over device memory, batch.Count times: call i
	// adds batch's offsets for i to offA, offB and offC. A device runs the
	// batch as its strided runs (GemmBatch.Strided): on a GPU one
	// strided-batched cuBLAS call each, emulated one CPU sgemm per product.
	Gemm(transA, transB bool, m, n, k int, alpha float32, a Buffer, offA, lda int, b Buffer, offB, ldb int, beta float32, c Buffer, offC, ldc int, batch GemmBatch)

	// Add sets y = a + b; Mul sets y = a * b (y may be a or b).
	Add(a, b, y Buffer)
	Mul(a, b, y Buffer)
	// GatherRows sets row p of y to row idx[p] of x (rows of cols values;
	// idx holds int32).
	GatherRows(x Buffer, cols int, idx Buffer, y Buffer)
	// ScatterAddRows adds row p of g into row idx[p] of gx, p in order.
	ScatterAddRows(g Buffer, cols int, idx Buffer, gx Buffer)
	// BroadcastRows sets every row of y (b.Len() wide) to b.
	BroadcastRows(b, y Buffer)
	// ColSums sets y[j] to the sum of column j of the rows x cols x, rows
	// in order.
	ColSums(x Buffer, rows, cols int, y Buffer)
	// DropoutMask fills m with dropout multipliers (keep or 0) exactly as
	// tensor's dropoutMask draws them from a math/rand/v2 PCG whose state
	// is (hi, lo): draw k of the PCG gives elements 2k and 2k+1.
	DropoutMask(m Buffer, thr uint32, keep float32, hi, lo uint64)
	// AttentionVisible sets vis (int32, batch*heads*qlen rows) to the
	// number of visible keys of each score row, from the key lengths lens
	// (int32, one per sequence) and the causal mask.
	AttentionVisible(lens Buffer, heads, qlen, klen int, causal bool, vis Buffer)
	// MaskedSoftmaxRows is Kernels.MaskedSoftmaxRows with vis on the device.
	MaskedSoftmaxRows(x Buffer, rows, cols int, vis Buffer)
	// SoftmaxBackwardRows replaces each row of d by p*(d - <p, d>)*scale.
	SoftmaxBackwardRows(p, d Buffer, rows, cols int, scale float32)
	// GELUForward, GELUBackward, LayerNormForward, LayerNormBackward and
	// AdamW are Kernels' methods of the same names over device memory.
	GELUForward(x, y, cdf Buffer)
	GELUBackward(x, cdf, gy, gx Buffer)
	LayerNormForward(x, g, b Buffer, rows, cols int, eps float32, y, xhat, rstd Buffer)
	LayerNormBackward(gy, g, xhat, rstd Buffer, rows, cols int, gx Buffer)
	AdamW(p, g, m, v Buffer, decay, b1, b2, stepSize, sqrtBC2, eps float32)
	// MeanPool averages the first lens[s] rows of each block of t rows of
	// x (cols wide) into row s of y; MeanPoolBackward is its gradient.
	MeanPool(x Buffer, t, cols int, lens Buffer, y Buffer)
	MeanPoolBackward(g Buffer, t, cols int, lens Buffer, gx Buffer)
	// MSEForward sets out[0] to the mean of (x-t)^2 (float64, in order);
	// MSEBackward sets gx = (gy[0]*2/n)*(x-t).
	MSEForward(x, t, out Buffer)
	MSEBackward(x, t, gy, gx Buffer)

	// The second slice: the other training types' operators and gradient
	// clipping, each what its operator's Go loop computes (kernels.h's
	// second part). Where that loop calls math.Exp or math.Log (tanh, the
	// (log-)softmax rows, cross-entropy) the kernel computes Go's amd64
	// functions, on the FMA path when GoExpFMA.

	// Sub sets y = a - b; Neg y = -x; Scale y = x*s (y may be x).
	Sub(a, b, y Buffer)
	Neg(x, y Buffer)
	Scale(x Buffer, s float32, y Buffer)
	// AbsForward, AbsBackward, TanhForward (float32(math.Tanh(float64(x))))
	// and TanhBackward (from y) are tensor.Abs's and tensor.Tanh's passes.
	AbsForward(x, y Buffer)
	AbsBackward(x, gy, gx Buffer)
	TanhForward(x, y Buffer)
	TanhBackward(y, gy, gx Buffer)
	// GELUTanh*, ReLU* and RMSNorm* are Kernels' methods of the same names
	// over device memory.
	GELUTanhForward(x, y, t Buffer)
	GELUTanhBackward(x, t, gy, gx Buffer)
	ReLUForward(x, y Buffer)
	ReLUBackward(x, gy, gx Buffer)
	RMSNormForward(x, g Buffer, rows, cols int, eps float32, y, xhat, rstd Buffer)
	RMSNormBackward(gy, g, xhat, rstd Buffer, rows, cols int, gx Buffer)
	// L2NormForward normalises each row (norm keeps the floored norms);
	// L2NormBackward is its gradient.
	L2NormForward(x Buffer, rows, cols int, eps float32, y, norm Buffer)
	L2NormBackward(y, norm, gy Buffer, rows, cols int, eps float32, gx Buffer)
	// RowDot sets y[r] to the float32 inner product of row r of a and b;
	// RowScale sets d[i] = g[i/cols] * src[i] (its gradient).
	RowDot(a, b Buffer, rows, cols int, y Buffer)
	RowScale(g, src Buffer, cols int, d Buffer)
	// CopyBlock copies a rows x width block from src[srcOff:] (rows srcLd
	// apart) into dst[dstOff:] (rows dstLd apart).
	CopyBlock(src Buffer, srcLd, srcOff int, dst Buffer, dstLd, dstOff, rows, width int)
	// Sum sets out[0] to the float64 sum of x's first n values in order
	// (divided by n when mean); FillFrom sets gx's first n values to gy[0]
	// (divided by n when mean).
	Sum(x Buffer, n int, mean bool, out Buffer)
	FillFrom(gy Buffer, n int, mean bool, gx Buffer)
	// LogSoftmaxRows sets each row of y to log softmax of x's (exp: to
	// softmax); SoftmaxRowsBackward is its gradient (log: of log softmax).
	LogSoftmaxRows(x Buffer, rows, cols int, exp bool, y Buffer)
	SoftmaxRowsBackward(y, gy Buffer, rows, cols int, log bool, gx Buffer)
	// CrossEntropyRows writes each row's probabilities and float64 loss
	// (losses holds rows float64s: 2*rows elements) for int32 targets,
	// -100 ignoring a row; CrossEntropySum sets out[0] to the mean of the
	// counted rows' losses; CrossEntropyBackward is the gradient.
	CrossEntropyRows(x, targets Buffer, rows, cols int, probs, losses Buffer)
	CrossEntropySum(losses, targets Buffer, rows, count int, out Buffer)
	CrossEntropyBackward(probs, targets, gy Buffer, rows, cols, count int, gx Buffer)
	// BiasMaskedSoftmaxRows is Kernels.BiasMaskedSoftmaxRows with vis on
	// the device; SoftmaxBackwardBiasRows is SoftmaxBackwardRows that also
	// writes ds = p*(d - <p, d>) (the score bias's gradient).
	BiasMaskedSoftmaxRows(x Buffer, rows, cols int, vis, bias Buffer, biasRows int)
	SoftmaxBackwardBiasRows(p, d, ds Buffer, rows, cols int, scale float32)
	// BucketBiasForward sets y [heads, n] from w [buckets, heads] and n
	// int32 buckets; BucketBiasBackward adds the gradient into gw.
	BucketBiasForward(w Buffer, heads int, buckets Buffer, n int, y Buffer)
	BucketBiasBackward(g Buffer, heads int, buckets Buffer, n int, gw Buffer)
	// SumSquares adds the float64 sum of the squares of x's first n values,
	// in order, to acc (one float64: 2 elements).
	SumSquares(x Buffer, n int, acc Buffer)

	// The third slice: decoding (generation) on the device, each what its
	// Go code computes (kernels.h's third part).

	// DecodeAttention is tensor.Attention's one-query path (QLen 1, no
	// dropout) for every (sequence, head): row b of q [B, D] (B =
	// lens.Len()) against rows b*klen .. of k and v [B*klen, D], the first
	// lens[b]+lenAdd of them (clamped to [0, klen]; at most 1 when causal);
	// bias nil or biasRows rows of klen added to the scaled scores; the
	// probabilities into probs [B*heads, klen], the result into out [B, D].
	DecodeAttention(q, k, v Buffer, heads, klen int, lens Buffer, lenAdd int, causal bool, scale float32, bias Buffer, biasRows int, probs, out Buffer)
	// WriteRowsAt copies row r of src [n, cols] (n = pos.Len()) into row
	// pos[r] of block r of dst, blocks of cap rows of cols: a decoding
	// step's keys or values into a cache.
	WriteRowsAt(src Buffer, cols int, pos Buffer, cap int, dst Buffer)
	// AddInts adds c to every int32 of x.
	AddInts(x Buffer, c int)
	// DecodeBucketBias sets y [n*heads, cap] (n = pos.Len()) to T5's
	// decoder self-attention bias of one query per sequence at position
	// pos[r]: row r*heads+h, key j <= pos[r] gets w[rb[pos[r]-j], h] (w is
	// buckets x heads, rb[d] the bucket of distance d), later keys 0.
	DecodeBucketBias(w Buffer, heads int, rb, pos Buffer, cap int, y Buffer)
	// SampleRows chooses the next token of each row of logits [rows,
	// vocab] as package generate's sampler does with s (-1 for a row that
	// holds a NaN) into out (int32), drawing from the row's math/rand/v2
	// PCG, whose state (hi, lo) is states[4r:4r+4] (two uint64s) and is
	// advanced by the draw; cands is scratch of s.CandCap(vocab)
	// candidates (4 elements each) per row.
	SampleRows(logits Buffer, rows, vocab int, s Sampling, states, cands, out Buffer)
}

// Sampling is how SampleRows chooses a token (package generate's Sampling
// without the penalties, which the host applies).
type Sampling struct {
	Greedy bool    // argmax, lowest id among equal logits
	InvT   float32 // 1 / temperature, as float32 (the sampler's invT)
	TopK   int     // 0 or >= vocab: no top-k
	TopP   float64 // 1: no nucleus
}

// CandCap is the number of candidates per row SampleRows keeps with s
// over a vocabulary of v tokens (at least 1).
func (s Sampling) CandCap(v int) int {
	switch {
	case s.Greedy:
		return 1
	case s.TopK > 0 && s.TopK < v:
		return s.TopK
	case s.TopP < 1:
		return max(v, 1)
	}
	return 1
}

// GemmBatch repeats a Gemm over a two-level grid, as attention needs one
// product per (sequence, head): call i = o*Inner + h (o < Count/Inner,
// h < Inner) offsets A by o*Outer[0] + h*InnerStride[0], B by index 1 and
// C by index 2. The zero value is a single call.
type GemmBatch struct {
	Count, Inner       int
	Outer, InnerStride [3]int
}

// Offsets returns the offsets of call i for A, B and C.
func (g GemmBatch) Offsets(i int) (a, b, c int) {
	inner := max(g.Inner, 1)
	o, h := i/inner, i%inner
	return o*g.Outer[0] + h*g.InnerStride[0], o*g.Outer[1] + h*g.InnerStride[1], o*g.Outer[2] + h*g.InnerStride[2]
}

// Calls is the number of products (1 for the zero value).
func (g GemmBatch) Calls() int { return max(g.Count, 1) }

// Strided is a run of products whose operands advance by fixed strides:
// product j (j < Count) of the run reads A at Base[0] + j*Stride[0], B at
// Base[1] + j*Stride[1] and writes C at Base[2] + j*Stride[2]. It is what
// one strided-batched GEMM call (cublasSgemmStridedBatched) computes.
type Strided struct {
	Count        int
	Base, Stride [3]int
}

// Strided splits the grid into strided runs covering every product once.
// One run when the grid is a single stride (Outer = Inner*InnerStride for
// all three operands, or a single outer or inner index); otherwise a
// (sequence, head) grid has two strides, which one strided batch cannot
// express, so the products are split into one run per inner index (a run
// over the outer indices) or one per outer index (a run over the inner
// ones), whichever gives fewer runs. A batch of pointers would do it in
// one call, but its pointer arrays would have to be uploaded every time.
func (g GemmBatch) Strided() []Strided {
	if g.Count <= 1 {
		a, b, c := g.Offsets(0)
		return []Strided{{Count: 1, Base: [3]int{a, b, c}}}
	}
	inner := max(g.Inner, 1)
	outer := g.Count / inner
	if g.Count%inner != 0 {
		panic(fmt.Sprintf("backend: a GEMM batch of %d products is not a grid of %d", g.Count, inner))
	}
	uniform := inner == 1 || outer == 1
	if !uniform {
		uniform = true
		for x := 0; x < 3; x++ {
			if g.Outer[x] != inner*g.InnerStride[x] {
				uniform = false
			}
		}
	}
	switch {
	case uniform && inner == 1:
		return []Strided{{Count: outer, Stride: g.Outer}}
	case uniform:
		return []Strided{{Count: g.Count, Stride: g.InnerStride}}
	case inner <= outer: // one run per head, over the sequences
		runs := make([]Strided, inner)
		for h := range runs {
			runs[h] = Strided{Count: outer, Stride: g.Outer}
			for x := 0; x < 3; x++ {
				runs[h].Base[x] = h * g.InnerStride[x]
			}
		}
		return runs
	}
	runs := make([]Strided, outer) // one run per sequence, over the heads
	for o := range runs {
		runs[o] = Strided{Count: inner, Stride: g.InnerStride}
		for x := 0; x < 3; x++ {
			runs[o].Base[x] = o * g.Outer[x]
		}
	}
	return runs
}

// DeviceOf returns b's device when b has one (a backend whose tensors can
// live in device memory implements interface{ Device() Device }).
func DeviceOf(b Backend) (Device, bool) {
	d, ok := b.(interface{ Device() Device })
	if !ok {
		return nil, false
	}
	return d.Device(), true
}

// NewDeviceOf returns a device of b for one user that reports its own
// copies (a training run): a Device with its own copy counter -- on the
// emulated device also its own memory, on a GPU the same memory --, so
// that what other stages sharing the backend copy meanwhile is not
// counted as the user's. false when b has no device.
func NewDeviceOf(b Backend) (Device, bool) {
	d, ok := b.(interface{ NewDevice() Device })
	if !ok {
		return nil, false
	}
	return d.NewDevice(), true
}

// Copies counts host<->device copies: how many and how many bytes each
// way, in all and by label (the why of Upload and Download).
type Copies struct {
	Up, Down           int   // copies
	UpBytes, DownBytes int64 // bytes
	ByLabel            map[string]Copy
}

// Copy is the count of one label.
type Copy struct {
	Up, Down           int
	UpBytes, DownBytes int64
}

// Bytes is the total bytes copied either way.
func (c Copies) Bytes() int64 { return c.UpBytes + c.DownBytes }

// Since returns the copies made after earlier (a snapshot of the same
// counter).
func (c Copies) Since(earlier Copies) Copies {
	d := Copies{Up: c.Up - earlier.Up, Down: c.Down - earlier.Down,
		UpBytes: c.UpBytes - earlier.UpBytes, DownBytes: c.DownBytes - earlier.DownBytes, ByLabel: map[string]Copy{}}
	for l, x := range c.ByLabel {
		e := earlier.ByLabel[l]
		y := Copy{Up: x.Up - e.Up, Down: x.Down - e.Down, UpBytes: x.UpBytes - e.UpBytes, DownBytes: x.DownBytes - e.DownBytes}
		if y != (Copy{}) {
			d.ByLabel[l] = y
		}
	}
	return d
}

// String lists the totals and every label, largest first.
func (c Copies) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d up (%d B), %d down (%d B)", c.Up, c.UpBytes, c.Down, c.DownBytes)
	labels := make([]string, 0, len(c.ByLabel))
	for l := range c.ByLabel {
		labels = append(labels, l)
	}
	sort.Slice(labels, func(i, j int) bool {
		bi := c.ByLabel[labels[i]].UpBytes + c.ByLabel[labels[i]].DownBytes
		bj := c.ByLabel[labels[j]].UpBytes + c.ByLabel[labels[j]].DownBytes
		if bi != bj {
			return bi > bj
		}
		return labels[i] < labels[j]
	})
	for _, l := range labels {
		x := c.ByLabel[l]
		fmt.Fprintf(&b, "\n  %s: %d up (%d B), %d down (%d B)", l, x.Up, x.UpBytes, x.Down, x.DownBytes)
	}
	return b.String()
}

// Counter is a Copies safe for concurrent use, for Device implementations.
type Counter struct {
	mu sync.Mutex
	c  Copies
}

// Up records an upload of n bytes labelled why.
func (k *Counter) Up(why string, n int64) { k.add(why, n, true) }

// Down records a download of n bytes labelled why.
func (k *Counter) Down(why string, n int64) { k.add(why, n, false) }

func (k *Counter) add(why string, n int64, up bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.c.ByLabel == nil {
		k.c.ByLabel = map[string]Copy{}
	}
	x := k.c.ByLabel[why]
	if up {
		k.c.Up++
		k.c.UpBytes += n
		x.Up++
		x.UpBytes += n
	} else {
		k.c.Down++
		k.c.DownBytes += n
		x.Down++
		x.DownBytes += n
	}
	k.c.ByLabel[why] = x
}

// Snapshot returns a copy of the counts.
func (k *Counter) Snapshot() Copies {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.c
	c.ByLabel = make(map[string]Copy, len(k.c.ByLabel))
	for l, x := range k.c.ByLabel {
		c.ByLabel[l] = x
	}
	return c
}
