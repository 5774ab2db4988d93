//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/cu"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/cuda/ptx"
)

// Device is the GPU as a backend.Device: tensors live in its memory and
// the operators' device paths (internal/tensor/device.go) run the kernels
// of ptx on it, cuBLAS for the GEMMs. Every host<->device copy goes through
// Upload and Download and is counted. Calls run on the backend's device
// goroutine, in order, on the default stream; Download is synchronous, so
// it sees every kernel launched before it.
//
// Not yet run on a GPU (none was available): gpu-check.sh runs its tests
// (kernels against their emulation, TestDeviceStepsMatchCPU).
type Device struct {
	b     *Backend
	count backend.Counter
	prec  backend.Precision // of the GEMMs (SetGemmPrecision)
}

var (
	_ backend.Device          = (*Device)(nil)
	_ backend.PrecisionDevice = (*Device)(nil)
)

// SetGemmPrecision sets the precision of this device value's GEMMs
// (backend.PrecisionDevice): TF32 runs cublasGemmStridedBatchedEx with
// CUBLAS_COMPUTE_32F_FAST_TF32; BF16 converts both operands to bfloat16
// (the repro_to_bf16 kernel, rounding as backend.RoundBF16) and runs it
// with CUDA_R_16BF operands, accumulating in FP32. The weights in device
// memory stay FP32 (the master copy).
func (d *Device) SetGemmPrecision(p backend.Precision) { d.prec = p }

// GemmPrecision is the precision SetGemmPrecision set (FP32 by default).
func (d *Device) GemmPrecision() backend.Precision { return d.prec }

// Device returns the GPU's device interface (backend.DeviceOf).
func (b *Backend) Device() backend.Device {
	b.devOnce.Do(func() { b.dev = &Device{b: b} })
	return b.dev
}

// NewDevice returns the GPU as a backend.Device with its own copy counter
// (backend.NewDeviceOf): the same memory, kernels and device goroutine.
func (b *Backend) NewDevice() backend.Device { return &Device{b: b} }

// dbuf is device memory of n 4-byte elements.
type dbuf struct {
	d   *Device
	ptr cu.DevicePtr
	n   int
}

func (x *dbuf) Len() int { return x.n }

func (d *Device) Name() string { return d.b.Name() }

func (d *Device) Copies() backend.Copies { return d.count.Snapshot() }

// buf checks that x belongs to this device.
func (d *Device) buf(x backend.Buffer) *dbuf {
	p, ok := x.(*dbuf)
	if !ok || p == nil || p.d != d {
		panic(fmt.Sprintf("cuda: a buffer of another device (%T)", x))
	}
	return p
}

func (d *Device) run(what string, f func() error) {
	if err := d.b.do(f); err != nil {
		panic(fmt.Errorf("cuda: %s: %w", what, err))
	}
}

// Alloc draws n zeroed elements from the scratch free lists.
func (d *Device) Alloc(n int) backend.Buffer {
	if n < 1 || n > math.MaxInt32 {
		panic(fmt.Sprintf("cuda: Alloc(%d)", n))
	}
	var x *dbuf
	d.run("Alloc", func() error {
		s, err := d.b.getScratch(n)
		if err != nil {
			return err
		}
		if err := cu.MemsetD32(s.ptr, 0, int64(n)); err != nil {
			d.b.putScratch(s)
			return fmt.Errorf("zeroing %d values: %w", n, err)
		}
		x = &dbuf{d: d, ptr: s.ptr, n: n}
		return nil
	})
	return x
}

// Free returns x to the free lists.
func (d *Device) Free(x backend.Buffer) {
	p := d.buf(x)
	d.run("Free", func() error { d.b.putScratch(devBuf{p.ptr, p.n}); return nil })
	p.ptr, p.n = 0, 0
}

func at(p *dbuf, off int) cu.DevicePtr { return p.ptr + cu.DevicePtr(4*off) }

func (d *Device) span(what string, x backend.Buffer, off, n int) *dbuf {
	p := d.buf(x)
	if off < 0 || n < 0 || off+n > p.n {
		panic(fmt.Sprintf("cuda: %s of %d values at %d in a buffer of %d", what, n, off, p.n))
	}
	return p
}

func (d *Device) Upload(dst backend.Buffer, off int, src []float32, why string) {
	p := d.span("Upload", dst, off, len(src))
	if len(src) == 0 {
		return
	}
	d.run("Upload", func() error { return cu.MemcpyHtoD(at(p, off), unsafe.Pointer(&src[0]), int64(4*len(src))) })
	d.count.Up(why, int64(4*len(src)))
}

func (d *Device) UploadInts(dst backend.Buffer, off int, src []int32, why string) {
	p := d.span("UploadInts", dst, off, len(src))
	if len(src) == 0 {
		return
	}
	d.run("UploadInts", func() error { return cu.MemcpyHtoD(at(p, off), unsafe.Pointer(&src[0]), int64(4*len(src))) })
	d.count.Up(why, int64(4*len(src)))
}

func (d *Device) Download(dst []float32, src backend.Buffer, off int, why string) {
	p := d.span("Download", src, off, len(dst))
	if len(dst) == 0 {
		return
	}
	d.run("Download", func() error { return cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), at(p, off), int64(4*len(dst))) })
	d.count.Down(why, int64(4*len(dst)))
}

func (d *Device) Fill(x backend.Buffer, v float32) {
	p := d.buf(x)
	d.run("Fill", func() error { return cu.MemsetD32(p.ptr, math.Float32bits(v), int64(p.n)) })
}

func (d *Device) Copy(dst, src backend.Buffer) {
	t, s := d.buf(dst), d.buf(src)
	if t.n != s.n {
		panic(fmt.Sprintf("cuda: Copy of %d values into %d", s.n, t.n))
	}
	d.run("Copy", func() error { return cu.MemcpyDtoD(t.ptr, s.ptr, int64(4*s.n)) })
}

// Gemm runs each strided run of the batch (backend.GemmBatch.Strided) as
// one cublasSgemmStridedBatched call (gemm.go): row-major operands as
// their column-major transposes, as Sgemm. Attention's per-(sequence,
// head) products are one call per head or per sequence, whichever is
// fewer.
func (d *Device) Gemm(transA, transB bool, m, n, k int, alpha float32, a backend.Buffer, offA, lda int, bb backend.Buffer, offB, ldb int, beta float32, c backend.Buffer, offC, ldc int, batch backend.GemmBatch) {
	A, B, C := d.buf(a), d.buf(bb), d.buf(c)
	if m == 0 || n == 0 {
		return
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	ea, eb, ec := extent(ar, ac, lda), extent(br, bc, ldb), extent(m, n, ldc)
	runs := batch.Strided()
	pa, pb, esize := A.ptr, B.ptr, 4
	if d.prec == backend.BF16 && k > 0 {
		// bfloat16 copies of the operands, element for element: the
		// offsets and strides stay, in 2-byte elements.
		ha, hb := d.Alloc((A.n+1)/2), d.Alloc((B.n+1)/2)
		defer d.Free(ha)
		defer d.Free(hb)
		d.toBF16(A, ha)
		d.toBF16(B, hb)
		pa, pb, esize = d.buf(ha).ptr, d.buf(hb).ptr, 2
	}
	elem := func(p cu.DevicePtr, off int) cu.DevicePtr { return p + cu.DevicePtr(esize*off) }
	d.run("Gemm", func() error {
		if d.b.failed != nil {
			return d.b.failed
		}
		for ri, r := range runs {
			oa, ob, oc := offA+r.Base[0], offB+r.Base[1], offC+r.Base[2]
			last := r.Count - 1
			for _, j := range []int{0, last} {
				if (k > 0 && (oa+j*r.Stride[0]+ea > A.n || ob+j*r.Stride[1]+eb > B.n)) || oc+j*r.Stride[2]+ec > C.n ||
					oa+j*r.Stride[0] < 0 || ob+j*r.Stride[1] < 0 || oc+j*r.Stride[2] < 0 {
					return fmt.Errorf("gemm run %d, product %d: operands outside their buffers", ri, j)
				}
			}
			if k == 0 {
				if beta == 0 {
					for j := 0; j < r.Count; j++ {
						for row := 0; row < m; row++ {
							if err := cu.MemsetD32(at(C, oc+j*r.Stride[2]+row*ldc), 0, int64(n)); err != nil {
								return err
							}
						}
					}
				}
				continue
			}
			if err := d.b.sgemmStrided(d.prec, transA, transB, m, n, k, alpha, elem(pa, oa), lda, r.Stride[0], elem(pb, ob), ldb, r.Stride[1],
				beta, at(C, oc), ldc, r.Stride[2], r.Count); err != nil {
				return err
			}
		}
		return nil
	})
}

// toBF16 writes the bfloat16 bits of x's elements into y (2 per element
// of y).
func (d *Device) toBF16(x, y backend.Buffer) {
	n := d.buf(x).n
	d.atLeast("toBF16", (n+1)/2, y)
	d.launch(func() cu.Function { return d.b.fns.toBF16 }, ptx.ToBF16, n, d.ptr(x), d.ptr(y), intArg(n))
}

// launch runs one kernel over n threads on the device goroutine.
func (d *Device) launch(fn func() cu.Function, name string, n int, args ...arg) {
	if n <= 0 {
		return
	}
	checkSize(name, n)
	d.b.kernel(name, func(j *job) { j.launch(fn(), name, n, args...) })
}

func (d *Device) ptr(x backend.Buffer) arg { return ptrArg(d.buf(x).ptr) }

func (d *Device) same(what string, n int, xs ...backend.Buffer) {
	for _, x := range xs {
		if d.buf(x).n != n {
			panic(fmt.Sprintf("cuda: %s: a buffer of %d values, want %d", what, d.buf(x).n, n))
		}
	}
}

func (d *Device) Add(a, b, y backend.Buffer) {
	n := d.buf(a).n
	d.same("Add", n, b, y)
	d.launch(func() cu.Function { return d.b.fns.add }, ptx.Add, n, d.ptr(a), d.ptr(b), d.ptr(y), intArg(n))
}

func (d *Device) Mul(a, b, y backend.Buffer) {
	n := d.buf(a).n
	d.same("Mul", n, b, y)
	d.launch(func() cu.Function { return d.b.fns.mul }, ptx.Mul, n, d.ptr(a), d.ptr(b), d.ptr(y), intArg(n))
}

func (d *Device) GatherRows(x backend.Buffer, cols int, idx backend.Buffer, y backend.Buffer) {
	n := d.buf(idx).n * cols
	d.same("GatherRows", n, y)
	d.launch(func() cu.Function { return d.b.fns.gatherRows }, ptx.GatherRows, n, d.ptr(x), intArg(cols), d.ptr(idx), d.ptr(y), intArg(n))
}

func (d *Device) ScatterAddRows(g backend.Buffer, cols int, idx backend.Buffer, gx backend.Buffer) {
	npos := d.buf(idx).n
	d.same("ScatterAddRows", npos*cols, g)
	d.launch(func() cu.Function { return d.b.fns.scatterAddRows }, ptx.ScatterAddRows, cols, d.ptr(g), intArg(cols), d.ptr(idx), intArg(npos), d.ptr(gx))
}

func (d *Device) BroadcastRows(b, y backend.Buffer) {
	cols, n := d.buf(b).n, d.buf(y).n
	if n%cols != 0 {
		panic(fmt.Sprintf("cuda: BroadcastRows: %d values are not rows of %d", n, cols))
	}
	d.launch(func() cu.Function { return d.b.fns.broadcastRows }, ptx.BroadcastRows, n, d.ptr(b), intArg(cols), d.ptr(y), intArg(n))
}

func (d *Device) ColSums(x backend.Buffer, rows, cols int, y backend.Buffer) {
	d.same("ColSums", rows*cols, x)
	d.same("ColSums", cols, y)
	d.launch(func() cu.Function { return d.b.fns.colSums }, ptx.ColSums, cols, d.ptr(x), intArg(rows), intArg(cols), d.ptr(y))
}

func u32(v uint64) arg { return arg{'i', v & 0xffffffff} }

func (d *Device) DropoutMask(m backend.Buffer, thr uint32, keep float32, hi, lo uint64) {
	n := d.buf(m).n
	d.launch(func() cu.Function { return d.b.fns.dropoutMask }, ptx.DropoutMask, (n+1)/2,
		d.ptr(m), intArg(n), u32(uint64(thr)), floatArg(keep), u32(hi>>32), u32(hi), u32(lo>>32), u32(lo))
}

func (d *Device) AttentionVisible(lens backend.Buffer, heads, qlen, klen int, causal bool, vis backend.Buffer) {
	n := d.buf(vis).n
	d.same("AttentionVisible", d.buf(lens).n*heads*qlen, vis)
	c := 0
	if causal {
		c = 1
	}
	d.launch(func() cu.Function { return d.b.fns.attentionVisible }, ptx.AttentionVisible, n,
		d.ptr(lens), intArg(heads), intArg(qlen), intArg(klen), intArg(c), d.ptr(vis), intArg(n))
}

func (d *Device) MaskedSoftmaxRows(x backend.Buffer, rows, cols int, vis backend.Buffer) {
	d.same("MaskedSoftmaxRows", rows*cols, x)
	d.same("MaskedSoftmaxRows", rows, vis)
	d.launch(func() cu.Function { return d.b.fns.maskedSoftmaxRows }, ptx.MaskedSoftmaxRows, rows, d.ptr(x), intArg(rows), intArg(cols), d.ptr(vis))
}

func (d *Device) SoftmaxBackwardRows(p, g backend.Buffer, rows, cols int, scale float32) {
	d.same("SoftmaxBackwardRows", rows*cols, p, g)
	d.launch(func() cu.Function { return d.b.fns.softmaxBackwardRows }, ptx.SoftmaxBackwardRows, rows, d.ptr(p), d.ptr(g), intArg(rows), intArg(cols), floatArg(scale))
}

func (d *Device) GELUForward(x, y, cdf backend.Buffer) {
	n := d.buf(x).n
	d.same("GELUForward", n, y, cdf)
	d.launch(func() cu.Function { return d.b.fns.geluForward }, ptx.GELUForward, n, d.ptr(x), d.ptr(y), d.ptr(cdf), intArg(n))
}

func (d *Device) GELUBackward(x, cdf, gy, gx backend.Buffer) {
	n := d.buf(x).n
	d.same("GELUBackward", n, cdf, gy, gx)
	d.launch(func() cu.Function { return d.b.fns.geluBackward }, ptx.GELUBackward, n, d.ptr(x), d.ptr(cdf), d.ptr(gy), d.ptr(gx), intArg(n))
}

func (d *Device) LayerNormForward(x, g, b backend.Buffer, rows, cols int, eps float32, y, xhat, rstd backend.Buffer) {
	d.same("LayerNormForward", rows*cols, x, y, xhat)
	d.same("LayerNormForward", cols, g, b)
	d.same("LayerNormForward", rows, rstd)
	d.launch(func() cu.Function { return d.b.fns.layerNormForward }, ptx.LayerNormForward, rows,
		d.ptr(x), d.ptr(g), d.ptr(b), intArg(rows), intArg(cols), floatArg(eps), d.ptr(y), d.ptr(xhat), d.ptr(rstd))
}

func (d *Device) LayerNormBackward(gy, g, xhat, rstd backend.Buffer, rows, cols int, gx backend.Buffer) {
	d.same("LayerNormBackward", rows*cols, gy, xhat, gx)
	d.same("LayerNormBackward", cols, g)
	d.same("LayerNormBackward", rows, rstd)
	d.launch(func() cu.Function { return d.b.fns.layerNormBackward }, ptx.LayerNormBackward, rows,
		d.ptr(gy), d.ptr(g), d.ptr(xhat), d.ptr(rstd), intArg(rows), intArg(cols), d.ptr(gx))
}

func (d *Device) AdamW(p, g, m, v backend.Buffer, decay, b1, b2, stepSize, sqrtBC2, eps float32) {
	n := d.buf(p).n
	d.same("AdamW", n, g, m, v)
	d.launch(func() cu.Function { return d.b.fns.adamW }, ptx.AdamW, n, d.ptr(p), d.ptr(g), d.ptr(m), d.ptr(v), intArg(n),
		floatArg(decay), floatArg(b1), floatArg(b2), floatArg(stepSize), floatArg(sqrtBC2), floatArg(eps))
}

func (d *Device) MeanPool(x backend.Buffer, t, cols int, lens backend.Buffer, y backend.Buffer) {
	B := d.buf(lens).n
	d.same("MeanPool", B*t*cols, x)
	d.same("MeanPool", B*cols, y)
	d.launch(func() cu.Function { return d.b.fns.meanPool }, ptx.MeanPool, B*cols, d.ptr(x), intArg(t), intArg(cols), d.ptr(lens), d.ptr(y), intArg(B*cols))
}

func (d *Device) MeanPoolBackward(g backend.Buffer, t, cols int, lens backend.Buffer, gx backend.Buffer) {
	B := d.buf(lens).n
	d.same("MeanPoolBackward", B*cols, g)
	d.same("MeanPoolBackward", B*t*cols, gx)
	d.launch(func() cu.Function { return d.b.fns.meanPoolBackward }, ptx.MeanPoolBackward, B*t*cols, d.ptr(g), intArg(t), intArg(cols), d.ptr(lens), d.ptr(gx), intArg(B*t*cols))
}

func (d *Device) MSEForward(x, t, out backend.Buffer) {
	n := d.buf(x).n
	d.same("MSEForward", n, t)
	d.same("MSEForward", 1, out)
	d.launch(func() cu.Function { return d.b.fns.mseForward }, ptx.MSEForward, 1, d.ptr(x), d.ptr(t), d.ptr(out), intArg(n))
}

func (d *Device) MSEBackward(x, t, gy, gx backend.Buffer) {
	n := d.buf(x).n
	d.same("MSEBackward", n, t, gx)
	d.same("MSEBackward", 1, gy)
	d.launch(func() cu.Function { return d.b.fns.mseBackward }, ptx.MSEBackward, n, d.ptr(x), d.ptr(t), d.ptr(gy), d.ptr(gx), intArg(n))
}
