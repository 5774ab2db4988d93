package tensor

import (
	"fmt"
	"math"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

// Decoding on a device: what a generation session keeps in device memory
// from step to step (see device.go for the design it extends), so that a
// step copies only the new token ids.
//
//   - Ints: int32 vectors the session owns (each sequence's next position,
//     the source lengths, this step's token ids), uploaded when they are
//     made or set and changed in place by kernels (Add) afterwards.
//   - Cache: a key or value cache, one block of rows per sequence. A
//     decoding step writes its keys and values into it (DecodeAttention,
//     at each sequence's position) and attends over it; nothing crosses.
//   - Streams: each sequence's random stream (math/rand/v2's PCG state),
//     uploaded once; DrawTokens draws the next tokens on the device from
//     the logits, as package generate's sampler does on the host, and
//     only the chosen ids come down.
//   - Select (Ints, Cache, Streams: Gather): the sequences kept when some
//     end; the kept rows' indices go up once for all of them.
//
// The operators here (GatherAt, DecodeAttention, DecodeBucketBias) are
// inference operators with a device path only: their values live on the
// device and they have no gradient. They are graph values like any other,
// freed by Release. Their arithmetic is the host session's bit for bit:
// DecodeAttention is Attention's one-query path (the CPU backend's), the
// others copy values.

// Ints is an int32 vector in device memory owned by its caller.
type Ints struct {
	dev backend.Device
	buf backend.Buffer
	n   int
}

// NewInts uploads vals to dev (counted under why).
func NewInts(dev backend.Device, vals []int, why string) *Ints {
	x := &Ints{dev: dev, buf: dev.Alloc(max(len(vals), 1)), n: len(vals)}
	x.upload(vals, why)
	return x
}

func (x *Ints) upload(vals []int, why string) {
	if len(vals) == 0 {
		return
	}
	v := make([]int32, len(vals))
	for i, a := range vals {
		if a < math.MinInt32 || a > math.MaxInt32 {
			panic(fmt.Sprintf("tensor.Ints: %d does not fit an int32", a))
		}
		v[i] = int32(a)
	}
	x.dev.UploadInts(x.buf, 0, v, why)
}

// Len is the number of values.
func (x *Ints) Len() int { return x.n }

// Set replaces the values with vals (uploaded, counted under why).
func (x *Ints) Set(vals []int, why string) {
	if len(vals) != x.n {
		x.dev.Free(x.buf)
		x.buf, x.n = x.dev.Alloc(max(len(vals), 1)), len(vals)
	}
	x.upload(vals, why)
}

// Add adds c to every value, on the device.
func (x *Ints) Add(c int) {
	if x.n > 0 {
		x.dev.AddInts(x.view(), c)
	}
}

// view is the buffer as the device kernels expect it: exactly n values.
func (x *Ints) view() backend.Buffer {
	if x.buf.Len() == x.n {
		return x.buf
	}
	panic(fmt.Sprintf("tensor.Ints: a buffer of %d for %d values", x.buf.Len(), x.n))
}

// Gather keeps the values at rows (x becomes x[rows[0]], x[rows[1]], ...),
// on the device.
func (x *Ints) Gather(rows *Ints) { x.buf, x.n = gatherBlocks(x.dev, x.buf, x.n, 1, rows), rows.n }

// Free returns the memory to the device.
func (x *Ints) Free() {
	if x.buf != nil {
		x.dev.Free(x.buf)
		x.buf, x.n = nil, 0
	}
}

// Download returns the values (counted under why): for tests.
func (x *Ints) Download(why string) []int {
	if x.n == 0 {
		return nil
	}
	h := make([]float32, x.n)
	x.dev.Download(h, x.buf, 0, why)
	out := make([]int, x.n)
	for i, v := range h {
		out[i] = int(int32(math.Float32bits(v)))
	}
	return out
}

// gatherBlocks returns a new buffer holding blocks rows[0], rows[1], ...
// of buf (n blocks of width 4-byte elements) and frees buf.
func gatherBlocks(dev backend.Device, buf backend.Buffer, n, width int, rows *Ints) backend.Buffer {
	if rows.dev != dev {
		panic("tensor: selecting rows with indices on another device")
	}
	out := dev.Alloc(max(rows.n*width, 1))
	if rows.n > 0 && n > 0 {
		src := buf
		if buf.Len() != n*width {
			panic(fmt.Sprintf("tensor: a buffer of %d for %d blocks of %d", buf.Len(), n, width))
		}
		dev.GatherRows(src, width, rows.view(), out)
	}
	dev.Free(buf)
	return out
}

// Cache is a key or value cache in device memory: one block of Cap rows
// of Cols values per sequence.
type Cache struct {
	dev             backend.Device
	buf             backend.Buffer
	seqs, cap, cols int
}

// NewCache returns a zeroed cache of seqs blocks of capacity rows of cols.
func NewCache(dev backend.Device, seqs, capacity, cols int) *Cache {
	return &Cache{dev: dev, buf: dev.Alloc(max(seqs*capacity*cols, 1)), seqs: seqs, cap: capacity, cols: cols}
}

// CacheOf copies x, a device value of seqs*capacity rows, into a new
// cache (x stays the graph's: Release frees it, the cache is the
// caller's).
func CacheOf(x mat.Tensor, seqs, capacity int) *Cache {
	v := devOf(x)
	if v == nil {
		panic("tensor.CacheOf: a value in host memory")
	}
	if v.rows != seqs*capacity {
		panic(fmt.Sprintf("tensor.CacheOf: %d rows for %d blocks of %d", v.rows, seqs, capacity))
	}
	c := &Cache{dev: v.dev, buf: v.dev.Alloc(max(v.rows*v.cols, 1)), seqs: seqs, cap: capacity, cols: v.cols}
	v.dev.Copy(c.buf, v.buf)
	return c
}

// Seqs, Cap and Cols are the cache's shape.
func (c *Cache) Seqs() int { return c.seqs }
func (c *Cache) Cap() int  { return c.cap }
func (c *Cache) Cols() int { return c.cols }

// Fill copies rows [from, from+rows) of x, a device value of Cols columns,
// into the first rows of block seq (a prompt's keys or values).
func (c *Cache) Fill(seq int, x mat.Tensor, from, rows int) {
	v := devOf(x)
	switch {
	case v == nil:
		panic("tensor.Cache.Fill: a value in host memory")
	case v.dev != c.dev:
		panic("tensor.Cache.Fill: a value on another device")
	case v.cols != c.cols || from < 0 || rows < 0 || from+rows > v.rows || rows > c.cap || seq < 0 || seq >= c.seqs:
		panic(fmt.Sprintf("tensor.Cache.Fill: rows %d..%d of a %dx%d value into block %d of %d rows of %d (%d blocks)",
			from, from+rows, v.rows, v.cols, seq, c.cap, c.cols, c.seqs))
	}
	if rows > 0 {
		c.dev.CopyBlock(v.buf, c.cols, from*c.cols, c.buf, c.cols, seq*c.cap*c.cols, rows, c.cols)
	}
}

// Gather keeps the blocks rows (block i becomes old block rows[i]).
func (c *Cache) Gather(rows *Ints) {
	c.buf, c.seqs = gatherBlocks(c.dev, c.buf, c.seqs, c.cap*c.cols, rows), rows.n
}

// Download returns the cache's values (counted under why): for tests.
func (c *Cache) Download(why string) []float32 {
	h := make([]float32, c.seqs*c.cap*c.cols)
	if len(h) > 0 {
		c.dev.Download(h, c.buf, 0, why)
	}
	return h
}

// Free returns the memory to the device.
func (c *Cache) Free() {
	if c.buf != nil {
		c.dev.Free(c.buf)
		c.buf, c.seqs = nil, 0
	}
}

// GatherAt returns rows idx[0], idx[1], ... of table (Gather with the
// indices in device memory: no copy).
func GatherAt(table mat.Tensor, idx *Ints) mat.Tensor {
	return run(&gatherAtFn{x: table, idx: idx, dt: devTemps{dev: idx.dev}})
}

type gatherAtFn struct {
	x   mat.Tensor
	idx *Ints
	dt  devTemps
}

func (f *gatherAtFn) temps() *devTemps       { return &f.dt }
func (f *gatherAtFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *gatherAtFn) Forward() (mat.Tensor, error) {
	_, c := Dims(f.x)
	X := f.dt.operand(f.x)
	out := newDevVal(f.dt.dev, f.idx.n, c)
	if f.idx.n > 0 {
		f.dt.dev.GatherRows(X, c, f.idx.view(), out.buf)
	}
	return wrapDev(out, f), nil
}

func (f *gatherAtFn) Backward(mat.Tensor) error {
	return fmt.Errorf("tensor.GatherAt: an inference operator has no gradient")
}

// DecodeSpec describes a DecodeAttention call.
type DecodeSpec struct {
	Heads int
	// Scale multiplies the scores; 0 means 1/sqrt(head width), as
	// AttentionSpec.Scale.
	Scale float32
	// Sequence b sees the first Lens[b] + LenAdd rows of its block
	// (clamped to the cache's capacity).
	Lens   *Ints
	LenAdd int
	// Bias, when not nil, is a device value added to the scaled scores:
	// [Heads, Cap] shared by the sequences or [B*Heads, Cap], one per
	// sequence (AttentionSpec.Bias with one query).
	Bias mat.Tensor
}

// DecodeAttention is Attention with one query per sequence against a
// key/value cache in device memory: q is [B, D] (B = kc.Seqs()), and the
// result [B, D]. When k and v are not nil ([B, D] each: this step's keys
// and values) row b of each is first written into row at[b] of block b of
// kc and vc. Its arithmetic is Attention's one-query path on the CPU.
func DecodeAttention(q, k, v mat.Tensor, kc, vc *Cache, at *Ints, s DecodeSpec) mat.Tensor {
	qr, d := Dims(q)
	switch {
	case s.Heads <= 0 || d%s.Heads != 0:
		panic(fmt.Sprintf("tensor.DecodeAttention: width %d with %d heads", d, s.Heads))
	case kc.seqs != qr || vc.seqs != qr || kc.cols != d || vc.cols != d || kc.cap != vc.cap:
		panic(fmt.Sprintf("tensor.DecodeAttention: %d queries of %d against caches of %dx%dx%d and %dx%dx%d",
			qr, d, kc.seqs, kc.cap, kc.cols, vc.seqs, vc.cap, vc.cols))
	case s.Lens == nil || s.Lens.n != qr:
		panic("tensor.DecodeAttention: the lengths must be given, one per sequence")
	case (k == nil) != (v == nil) || (k != nil && at == nil):
		panic("tensor.DecodeAttention: keys and values are written together, at given positions")
	}
	f := &decodeAttnFn{q: q, k: k, v: v, kc: kc, vc: vc, at: at, s: s, dt: devTemps{dev: kc.dev}, scale: s.Scale}
	if f.scale == 0 {
		f.scale = float32(1 / math.Sqrt(float64(d/s.Heads)))
	}
	if s.Bias != nil {
		br, bc := Dims(s.Bias)
		if bc != kc.cap || (br != s.Heads && br != qr*s.Heads) {
			panic(fmt.Sprintf("tensor.DecodeAttention: bias is %dx%d, want %dx%d or %dx%d", br, bc, s.Heads, kc.cap, qr*s.Heads, kc.cap))
		}
		f.biasRows = br
	}
	return run(f)
}

type decodeAttnFn struct {
	q, k, v  mat.Tensor
	kc, vc   *Cache
	at       *Ints
	s        DecodeSpec
	scale    float32
	biasRows int
	dt       devTemps
}

func (f *decodeAttnFn) temps() *devTemps { return &f.dt }

func (f *decodeAttnFn) Operands() []mat.Tensor {
	ops := []mat.Tensor{f.q}
	if f.k != nil {
		ops = append(ops, f.k, f.v)
	}
	if f.s.Bias != nil {
		ops = append(ops, f.s.Bias)
	}
	return ops
}

func (f *decodeAttnFn) Forward() (mat.Tensor, error) {
	dev := f.dt.dev
	B, D := Dims(f.q)
	H, cap := f.s.Heads, f.kc.cap
	if f.k != nil {
		dev.WriteRowsAt(f.dt.operand(f.k), D, f.at.view(), cap, f.kc.buf)
		dev.WriteRowsAt(f.dt.operand(f.v), D, f.at.view(), cap, f.vc.buf)
	}
	var bias backend.Buffer
	if f.s.Bias != nil {
		bias = f.dt.operand(f.s.Bias)
	}
	probs := dev.Alloc(max(B*H*cap, 1))
	defer dev.Free(probs)
	out := newDevVal(dev, B, D)
	if B > 0 {
		dev.DecodeAttention(f.dt.operand(f.q), f.kc.buf, f.vc.buf, H, cap, f.s.Lens.view(), f.s.LenAdd, false, f.scale,
			bias, max(f.biasRows, 1), probs, out.buf)
	}
	return wrapDev(out, f), nil
}

func (f *decodeAttnFn) Backward(mat.Tensor) error {
	return fmt.Errorf("tensor.DecodeAttention: an inference operator has no gradient")
}

// DecodeBucketBias returns T5's decoder self-attention bias of one query
// per sequence against its cache, [n*heads, capacity] (n = pos.Len()):
// sequence r's query is at position pos[r]; key j <= pos[r] gets
// table[rb[pos[r]-j], h] for head h (table is buckets x heads, rb[d] the
// bucket of distance d, capacity of them), the keys after it 0.
func DecodeBucketBias(table mat.Tensor, heads int, rb, pos *Ints, capacity int) mat.Tensor {
	if _, c := Dims(table); c != heads {
		panic(fmt.Sprintf("tensor.DecodeBucketBias: a table of %d columns for %d heads", c, heads))
	}
	if rb.n < capacity {
		panic(fmt.Sprintf("tensor.DecodeBucketBias: %d buckets for a capacity of %d", rb.n, capacity))
	}
	return run(&decodeBiasFn{w: table, heads: heads, rb: rb, pos: pos, cap: capacity, dt: devTemps{dev: pos.dev}})
}

type decodeBiasFn struct {
	w          mat.Tensor
	heads, cap int
	rb, pos    *Ints
	dt         devTemps
}

func (f *decodeBiasFn) temps() *devTemps       { return &f.dt }
func (f *decodeBiasFn) Operands() []mat.Tensor { return []mat.Tensor{f.w} }

func (f *decodeBiasFn) Forward() (mat.Tensor, error) {
	out := newDevVal(f.dt.dev, f.pos.n*f.heads, f.cap)
	if f.pos.n > 0 {
		f.dt.dev.DecodeBucketBias(f.dt.operand(f.w), f.heads, f.rb.view(), f.pos.view(), f.cap, out.buf)
	}
	return wrapDev(out, f), nil
}

func (f *decodeBiasFn) Backward(mat.Tensor) error {
	return fmt.Errorf("tensor.DecodeBucketBias: an inference operator has no gradient")
}

// Streams are the random streams of a decoding session's sequences on the
// device: each one's math/rand/v2 PCG state.
type Streams struct {
	dev backend.Device
	buf backend.Buffer // 4 elements (two uint64s, hi then lo) per sequence
	n   int
}

// NewStreams uploads the PCG states (hi, lo) of n sequences (counted as
// "sampling streams").
func NewStreams(dev backend.Device, states [][2]uint64) *Streams {
	s := &Streams{dev: dev, buf: dev.Alloc(max(4*len(states), 1)), n: len(states)}
	if len(states) > 0 {
		h := make([]int32, 4*len(states))
		for i, st := range states {
			for w, u := range st { // little-endian uint64s: low word first
				h[4*i+2*w] = int32(uint32(u))
				h[4*i+2*w+1] = int32(uint32(u >> 32))
			}
		}
		dev.UploadInts(s.buf, 0, h, "sampling streams")
	}
	return s
}

// Len is the number of streams.
func (s *Streams) Len() int { return s.n }

// Gather keeps the streams rows.
func (s *Streams) Gather(rows *Ints) { s.buf, s.n = gatherBlocks(s.dev, s.buf, s.n, 4, rows), rows.n }

// States downloads the streams' states (counted under why): for tests.
func (s *Streams) States(why string) [][2]uint64 {
	if s.n == 0 {
		return nil
	}
	h := make([]float32, 4*s.n)
	s.dev.Download(h, s.buf, 0, why)
	out := make([][2]uint64, s.n)
	for i := range out {
		for w := range out[i] {
			out[i][w] = uint64(math.Float32bits(h[4*i+2*w])) | uint64(math.Float32bits(h[4*i+2*w+1]))<<32
		}
	}
	return out
}

// Free returns the memory to the device.
func (s *Streams) Free() {
	if s.buf != nil {
		s.dev.Free(s.buf)
		s.buf, s.n = nil, 0
	}
}

// DrawTokens chooses the next token of every row of logits, a device
// value [n, vocab], with sampling s, row i drawing from stream i of st, as
// package generate's sampler does on the host; only the n chosen ids come
// down (counted as "drawn token ids"). A row holding a NaN gives -1. st
// may be nil when s is greedy (nothing is drawn).
func DrawTokens(logits mat.Tensor, s backend.Sampling, st *Streams) []int {
	v := devOf(logits)
	switch {
	case v == nil:
		panic("tensor.DrawTokens: logits in host memory")
	case st == nil && !s.Greedy:
		panic("tensor.DrawTokens: sampling needs the sequences' streams")
	case st != nil && v.dev != st.dev:
		panic("tensor.DrawTokens: logits and streams on two devices")
	case st != nil && v.rows != st.n:
		panic(fmt.Sprintf("tensor.DrawTokens: %d rows of logits for %d streams", v.rows, st.n))
	}
	n, V := v.rows, v.cols
	if n == 0 {
		return nil
	}
	dev := v.dev
	var states backend.Buffer
	if st != nil {
		states = st.buf
	} else {
		states = dev.Alloc(4 * n) // greedy: never read
		defer dev.Free(states)
	}
	cands := dev.Alloc(max(4*n*s.CandCap(V), 1))
	defer dev.Free(cands)
	out := dev.Alloc(n)
	defer dev.Free(out)
	dev.SampleRows(v.buf, n, V, s, states, cands, out)
	h := make([]float32, n)
	dev.Download(h, out, 0, "drawn token ids")
	ids := make([]int, n)
	for i, x := range h {
		ids[i] = int(int32(math.Float32bits(x)))
	}
	return ids
}

// Discard frees placed leaves' device copies without fetching them (the
// weights a generation only read); a leaf whose device copy changed is
// fetched first, as Unplace does.
func Discard(leaves ...mat.Tensor) {
	for _, x := range leaves {
		if l := placedLeaf(x); l != nil {
			l.mu.Lock()
			stale := l.stale
			l.mu.Unlock()
			if stale {
				Fetch(x)
			}
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
