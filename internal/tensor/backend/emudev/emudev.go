// Package emudev is the emulated device backend, "emu": a backend.Device
// whose memory is kept apart from the host's and whose kernels are the
// CUDA kernels' C bodies (../cuda/ptx/kernels.h, run by package
// ../cuda/ptx/emu one thread index after another) and, for the GEMMs, the
// CPU's sgemm (package kernel). It needs no GPU and no build tag (only cgo,
// which the binary already uses), so everything the device-resident
// training path does (internal/tensor/device.go) is tested here on every
// machine: where memory lives, what is copied, and that the arithmetic is
// the CPU's bit for bit.
//
// Device memory. A Buffer is a handle over a Go slice that only this
// package touches, drawn from the device's own allocator (free lists by
// size, apart from package tensor's host pools). Host code gets its values
// only through Download, which is counted; Upload likewise. Freed buffers
// are filled with NaN before reuse, so reading one after Free shows.
// Live reports what is allocated, so tests can check that a released
// graph gave everything back.
//
// As a plain backend (host slices, for operators whose values are in host
// memory) it behaves like today's CUDA backend and counts what that would
// copy: Sgemm uploads A and B (unless kept, backend.Resident) and C when
// beta is not 0, and downloads C; the backend.Kernels calls upload their
// inputs and download their outputs. So `repro run --backend emu` shows
// what the copy-per-call CUDA path moves, with the CPU's results.
//
// Importing the package registers "emu" with backend.ByName; every
// ByName("emu") shares one device (Default). New makes a fresh one with
// its own counter, for tests.
package emudev

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/cuda/ptx/emu"
	"repro/internal/tensor/kernel"
)

func init() {
	backend.Register("emu", "", func(arg string) (backend.Backend, error) {
		if arg != "" {
			return nil, fmt.Errorf("the emu backend takes no argument, got %q", arg)
		}
		return Default(), nil
	})
}

var (
	defaultOnce sync.Once
	defaultB    *Backend
)

// Default returns the process's shared emulated backend.
func Default() *Backend {
	defaultOnce.Do(func() { defaultB = New() })
	return defaultB
}

// Backend is the emulated device as a backend.Backend (host slices, the
// copy path counted), backend.Kernels, backend.Resident, and, through
// Device, a backend.Device.
type Backend struct {
	dev  *Device
	mu   sync.Mutex
	kept map[*float32]int // backend.Resident: first element -> length
}

var (
	_ backend.Backend  = (*Backend)(nil)
	_ backend.Kernels  = (*Backend)(nil)
	_ backend.Resident = (*Backend)(nil)
	_ backend.Device   = (*Device)(nil)

	_ backend.PrecisionDevice = (*Device)(nil)
)

// New returns a fresh emulated backend with its own device and counter.
func New() *Backend {
	return &Backend{dev: &Device{free: map[int][]*buffer{}}, kept: map[*float32]int{}}
}

// Name is "emu".
func (b *Backend) Name() string { return "emu" }

// Device returns the emulated device (backend.DeviceOf).
func (b *Backend) Device() backend.Device { return b.dev }

// NewDevice returns a fresh emulated device (its own memory and counter:
// backend.NewDeviceOf).
func (b *Backend) NewDevice() backend.Device { return &Device{free: map[int][]*buffer{}} }

// Dev is Device with its concrete type (Live, Copies).
func (b *Backend) Dev() *Device { return b.dev }

func (b *Backend) isKept(x []float32) bool {
	if len(x) == 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.kept[&x[0]]
	return ok && n == len(x)
}

// Keep records x as resident (counted as one upload).
func (b *Backend) Keep(x []float32) {
	if len(x) == 0 {
		return
	}
	b.mu.Lock()
	b.kept[&x[0]] = len(x)
	b.mu.Unlock()
	b.dev.count.Up("host path: keep (backend.Resident)", int64(4*len(x)))
}

// Changed counts the refresh of a kept x.
func (b *Backend) Changed(x []float32) {
	if b.isKept(x) {
		b.dev.count.Up("host path: keep (backend.Resident)", int64(4*len(x)))
	}
}

// Release forgets a kept x.
func (b *Backend) Release(x []float32) {
	if len(x) == 0 {
		return
	}
	b.mu.Lock()
	delete(b.kept, &x[0])
	b.mu.Unlock()
}

func extent(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

// Sgemm is the CPU's sgemm, counting the copies the CUDA backend makes.
func (b *Backend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) {
	kernel.Sgemm(transA, transB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
	if m == 0 || n == 0 || k == 0 || alpha == 0 {
		return
	}
	ar, ac, br, bc := m, k, k, n
	if transA {
		ar, ac = k, m
	}
	if transB {
		br, bc = n, k
	}
	const why = "host path: sgemm operands"
	if !b.isKept(a) {
		b.dev.count.Up(why, int64(4*extent(ar, ac, lda)))
	}
	if !b.isKept(bm) {
		b.dev.count.Up(why, int64(4*extent(br, bc, ldb)))
	}
	nc := int64(4 * extent(m, n, ldc))
	if beta != 0 || ldc != n {
		b.dev.count.Up(why, nc)
	}
	b.dev.count.Down(why, nc)
}

// hostKernel counts a backend.Kernels call's copies: ins uploaded, outs
// downloaded.
func (b *Backend) hostKernel(name string, ins, outs int) {
	why := "host path: kernel " + name
	if ins > 0 {
		b.dev.count.Up(why, int64(4*ins))
	}
	if outs > 0 {
		b.dev.count.Down(why, int64(4*outs))
	}
}

func (b *Backend) GELUForward(x, y, cdf []float32) {
	emu.GELUForward(x, y, cdf)
	b.hostKernel("GELUForward", len(x), 2*len(x))
}

func (b *Backend) GELUBackward(x, cdf, gy, gx []float32) {
	emu.GELUBackward(x, cdf, gy, gx)
	b.hostKernel("GELUBackward", 3*len(x), len(x))
}

func (b *Backend) LayerNormForward(x, g, bias []float32, rows, cols int, eps float32, y, xhat, rstd []float32) {
	emu.LayerNormForward(x, g, bias, rows, cols, eps, y, xhat, rstd)
	b.hostKernel("LayerNormForward", rows*cols+2*cols, 2*rows*cols+rows)
}

func (b *Backend) LayerNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32) {
	emu.LayerNormBackward(gy, g, xhat, rstd, rows, cols, gx)
	b.hostKernel("LayerNormBackward", 2*rows*cols+cols+rows, rows*cols)
}

func (b *Backend) MaskedSoftmaxRows(x []float32, rows, cols int, visible []int32) {
	emu.MaskedSoftmaxRows(x, rows, cols, visible)
	b.hostKernel("MaskedSoftmaxRows", rows*cols+rows, rows*cols)
}

func (b *Backend) GELUTanhForward(x, y, t []float32) {
	emu.GELUTanhForward(x, y, t)
	b.hostKernel("GELUTanhForward", len(x), 2*len(x))
}

func (b *Backend) GELUTanhBackward(x, t, gy, gx []float32) {
	emu.GELUTanhBackward(x, t, gy, gx)
	b.hostKernel("GELUTanhBackward", 3*len(x), len(x))
}

func (b *Backend) ReLUForward(x, y []float32) {
	emu.ReLUForward(x, y)
	b.hostKernel("ReLUForward", len(x), len(x))
}

func (b *Backend) ReLUBackward(x, gy, gx []float32) {
	emu.ReLUBackward(x, gy, gx)
	b.hostKernel("ReLUBackward", 2*len(x), len(x))
}

func (b *Backend) RMSNormForward(x, g []float32, rows, cols int, eps float32, y, xhat, rstd []float32) {
	emu.RMSNormForward(x, g, rows, cols, eps, y, xhat, rstd)
	b.hostKernel("RMSNormForward", rows*cols+cols, 2*rows*cols+rows)
}

func (b *Backend) RMSNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32) {
	emu.RMSNormBackward(gy, g, xhat, rstd, rows, cols, gx)
	b.hostKernel("RMSNormBackward", 2*rows*cols+cols+rows, rows*cols)
}

func (b *Backend) BiasMaskedSoftmaxRows(x []float32, rows, cols int, visible []int32, bias []float32, biasRows int) {
	emu.BiasMaskedSoftmaxRows(x, rows, cols, visible, bias, biasRows)
	b.hostKernel("BiasMaskedSoftmaxRows", rows*cols+rows+biasRows*cols, rows*cols)
}

// AdamW updates p, m and v; a kept p is not uploaded, but is downloaded
// (the CUDA backend writes the update back to the host).
func (b *Backend) AdamW(p, g, m, v []float32, decay, b1, b2, stepSize, sqrtBC2, eps float32) {
	emu.AdamW(p, g, m, v, decay, b1, b2, stepSize, sqrtBC2, eps)
	in := 3 * len(p)
	if !b.isKept(p) {
		in += len(p)
	}
	b.hostKernel("AdamW", in, 3*len(p))
}

// Device is the emulated device memory and its kernels.
type Device struct {
	count backend.Counter
	prec  backend.Precision // of the GEMMs (SetGemmPrecision)

	mu        sync.Mutex
	free      map[int][]*buffer // by capacity class
	live      int
	liveBytes int64
}

// buffer is a block of emulated device memory.
type buffer struct {
	d     *Device
	data  []float32 // len = Len(); cap = its size class
	freed bool
}

func (b *buffer) Len() int { return len(b.data) }

// ints views the buffer as int32 (the same 4-byte elements).
func (b *buffer) ints() []int32 {
	if len(b.data) == 0 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b.data[0])), len(b.data))
}

// Name is "emu".
func (d *Device) Name() string { return "emu" }

// Copies reports the copies counted so far.
func (d *Device) Copies() backend.Copies { return d.count.Snapshot() }

// Live reports the buffers allocated and not freed, and their bytes.
func (d *Device) Live() (buffers int, bytes int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.live, d.liveBytes
}

func sizeClass(n int) int {
	if n <= 64 {
		return 64
	}
	return 1 << bits.Len(uint(n-1))
}

// Alloc returns n zeroed elements.
func (d *Device) Alloc(n int) backend.Buffer {
	if n < 1 {
		panic(fmt.Sprintf("emudev: Alloc(%d)", n))
	}
	c := sizeClass(n)
	d.mu.Lock()
	var b *buffer
	if free := d.free[c]; len(free) > 0 {
		b = free[len(free)-1]
		d.free[c] = free[:len(free)-1]
	}
	d.live++
	d.liveBytes += int64(4 * n)
	d.mu.Unlock()
	if b == nil {
		return &buffer{d: d, data: make([]float32, n, c)}
	}
	b.freed = false
	b.data = b.data[:n]
	clear(b.data)
	return b
}

// buf checks that x is a live buffer of this device.
func (d *Device) buf(x backend.Buffer) *buffer {
	b, ok := x.(*buffer)
	if !ok || b == nil || b.d != d {
		panic(fmt.Sprintf("emudev: a buffer of another device (%T)", x))
	}
	if b.freed {
		panic("emudev: a buffer used after Free")
	}
	return b
}

// Free poisons b with NaN and returns it to the free list.
func (d *Device) Free(x backend.Buffer) {
	b := d.buf(x)
	b.freed = true
	full := b.data[:cap(b.data)]
	nan := float32(math.NaN())
	for i := range full {
		full[i] = nan
	}
	d.mu.Lock()
	d.live--
	d.liveBytes -= int64(4 * len(b.data))
	d.free[cap(b.data)] = append(d.free[cap(b.data)], b)
	d.mu.Unlock()
}

func (d *Device) span(what string, x backend.Buffer, off, n int) []float32 {
	b := d.buf(x)
	if off < 0 || n < 0 || off+n > len(b.data) {
		panic(fmt.Sprintf("emudev: %s of %d values at %d in a buffer of %d", what, n, off, len(b.data)))
	}
	return b.data[off : off+n]
}

// Upload copies src into dst[off:] and counts it.
func (d *Device) Upload(dst backend.Buffer, off int, src []float32, why string) {
	copy(d.span("Upload", dst, off, len(src)), src)
	d.count.Up(why, int64(4*len(src)))
}

// UploadInts copies src into dst[off:] and counts it.
func (d *Device) UploadInts(dst backend.Buffer, off int, src []int32, why string) {
	d.span("UploadInts", dst, off, len(src))
	copy(d.buf(dst).ints()[off:], src)
	d.count.Up(why, int64(4*len(src)))
}

// Download copies src[off:off+len(dst)] into dst and counts it.
func (d *Device) Download(dst []float32, src backend.Buffer, off int, why string) {
	copy(dst, d.span("Download", src, off, len(dst)))
	d.count.Down(why, int64(4*len(dst)))
}

// Fill sets every element to v.
func (d *Device) Fill(x backend.Buffer, v float32) {
	s := d.buf(x).data
	for i := range s {
		s[i] = v
	}
}

// Copy copies src into dst on the device.
func (d *Device) Copy(dst, src backend.Buffer) {
	s, t := d.buf(src).data, d.buf(dst).data
	if len(s) != len(t) {
		panic(fmt.Sprintf("emudev: Copy of %d values into %d", len(s), len(t)))
	}
	copy(t, s)
}

// SetGemmPrecision sets the precision of this device's GEMMs
// (backend.PrecisionDevice): with TF32 or BF16 each GEMM reads its
// operands rounded to it (backend.Precision.Round) and accumulates in
// FP32 as the CPU's sgemm does.
func (d *Device) SetGemmPrecision(p backend.Precision) { d.prec = p }

// GemmPrecision is the precision SetGemmPrecision set (FP32 by default).
func (d *Device) GemmPrecision() backend.Precision { return d.prec }

// rounded returns x's values rounded to the GEMMs' precision (x itself in
// FP32).
func (d *Device) rounded(x []float32) []float32 {
	if d.prec == backend.FP32 {
		return x
	}
	r := make([]float32, len(x))
	for i, v := range x {
		r[i] = d.prec.Round(v)
	}
	return r
}

// Gemm runs the batch as its strided runs (backend.GemmBatch.Strided, as
// the GPU's strided-batched cuBLAS calls do), each product one CPU sgemm
// on device memory: the bits of one Sgemm per product. In mixed precision
// the operands are read rounded (SetGemmPrecision).
func (d *Device) Gemm(transA, transB bool, m, n, k int, alpha float32, a backend.Buffer, offA, lda int, b backend.Buffer, offB, ldb int, beta float32, c backend.Buffer, offC, ldc int, batch backend.GemmBatch) {
	A, B, C := d.buf(a).data, d.buf(b).data, d.buf(c).data
	if d.prec != backend.FP32 && k > 0 {
		A, B = d.rounded(A), d.rounded(B)
	}
	for _, run := range batch.Strided() {
		for j := 0; j < run.Count; j++ {
			oa := offA + run.Base[0] + j*run.Stride[0]
			ob := offB + run.Base[1] + j*run.Stride[1]
			oc := offC + run.Base[2] + j*run.Stride[2]
			if oa > len(A) || ob > len(B) || oc > len(C) {
				panic(fmt.Sprintf("emudev: Gemm product %d of a run: offsets %d, %d, %d outside buffers of %d, %d, %d", j, oa, ob, oc, len(A), len(B), len(C)))
			}
			if m == 0 || n == 0 {
				continue
			}
			if k == 0 {
				// tensor's sgemm: C unchanged, or cleared when beta is 0.
				if beta == 0 {
					for r := 0; r < m; r++ {
						clear(C[oc+r*ldc : oc+r*ldc+n])
					}
				}
				continue
			}
			kernel.Sgemm(transA, transB, m, n, k, alpha, A[oa:], lda, B[ob:], ldb, beta, C[oc:], ldc)
		}
	}
}

func (d *Device) Add(a, b, y backend.Buffer) { emu.Add(d.buf(a).data, d.buf(b).data, d.buf(y).data) }
func (d *Device) Mul(a, b, y backend.Buffer) { emu.Mul(d.buf(a).data, d.buf(b).data, d.buf(y).data) }

func (d *Device) GatherRows(x backend.Buffer, cols int, idx backend.Buffer, y backend.Buffer) {
	emu.GatherRows(d.buf(x).data, cols, d.buf(idx).ints(), d.buf(y).data)
}

func (d *Device) ScatterAddRows(g backend.Buffer, cols int, idx backend.Buffer, gx backend.Buffer) {
	emu.ScatterAddRows(d.buf(g).data, cols, d.buf(idx).ints(), d.buf(gx).data)
}

func (d *Device) BroadcastRows(b, y backend.Buffer) { emu.BroadcastRows(d.buf(b).data, d.buf(y).data) }

func (d *Device) ColSums(x backend.Buffer, rows, cols int, y backend.Buffer) {
	emu.ColSums(d.buf(x).data, rows, cols, d.buf(y).data)
}

func (d *Device) DropoutMask(m backend.Buffer, thr uint32, keep float32, hi, lo uint64) {
	emu.DropoutMask(d.buf(m).data, thr, keep, hi, lo)
}

func (d *Device) AttentionVisible(lens backend.Buffer, heads, qlen, klen int, causal bool, vis backend.Buffer) {
	emu.AttentionVisible(d.buf(lens).ints(), heads, qlen, klen, causal, d.buf(vis).ints())
}

func (d *Device) MaskedSoftmaxRows(x backend.Buffer, rows, cols int, vis backend.Buffer) {
	emu.MaskedSoftmaxRows(d.buf(x).data, rows, cols, d.buf(vis).ints())
}

func (d *Device) SoftmaxBackwardRows(p, g backend.Buffer, rows, cols int, scale float32) {
	emu.SoftmaxBackwardRows(d.buf(p).data, d.buf(g).data, rows, cols, scale)
}

func (d *Device) GELUForward(x, y, cdf backend.Buffer) {
	emu.GELUForward(d.buf(x).data, d.buf(y).data, d.buf(cdf).data)
}

func (d *Device) GELUBackward(x, cdf, gy, gx backend.Buffer) {
	emu.GELUBackward(d.buf(x).data, d.buf(cdf).data, d.buf(gy).data, d.buf(gx).data)
}

func (d *Device) LayerNormForward(x, g, b backend.Buffer, rows, cols int, eps float32, y, xhat, rstd backend.Buffer) {
	emu.LayerNormForward(d.buf(x).data, d.buf(g).data, d.buf(b).data, rows, cols, eps, d.buf(y).data, d.buf(xhat).data, d.buf(rstd).data)
}

func (d *Device) LayerNormBackward(gy, g, xhat, rstd backend.Buffer, rows, cols int, gx backend.Buffer) {
	emu.LayerNormBackward(d.buf(gy).data, d.buf(g).data, d.buf(xhat).data, d.buf(rstd).data, rows, cols, d.buf(gx).data)
}

func (d *Device) AdamW(p, g, m, v backend.Buffer, decay, b1, b2, stepSize, sqrtBC2, eps float32) {
	emu.AdamW(d.buf(p).data, d.buf(g).data, d.buf(m).data, d.buf(v).data, decay, b1, b2, stepSize, sqrtBC2, eps)
}

func (d *Device) MeanPool(x backend.Buffer, t, cols int, lens backend.Buffer, y backend.Buffer) {
	emu.MeanPool(d.buf(x).data, t, cols, d.buf(lens).ints(), d.buf(y).data)
}

func (d *Device) MeanPoolBackward(g backend.Buffer, t, cols int, lens backend.Buffer, gx backend.Buffer) {
	emu.MeanPoolBackward(d.buf(g).data, t, cols, d.buf(lens).ints(), d.buf(gx).data)
}

func (d *Device) MSEForward(x, t, out backend.Buffer) {
	emu.MSEForward(d.buf(x).data, d.buf(t).data, d.buf(out).data)
}

func (d *Device) MSEBackward(x, t, gy, gx backend.Buffer) {
	emu.MSEBackward(d.buf(x).data, d.buf(t).data, d.buf(gy).data, d.buf(gx).data)
}

// The second slice.

func (d *Device) Sub(a, b, y backend.Buffer) { emu.Sub(d.buf(a).data, d.buf(b).data, d.buf(y).data) }
func (d *Device) Neg(x, y backend.Buffer)    { emu.Neg(d.buf(x).data, d.buf(y).data) }
func (d *Device) Scale(x backend.Buffer, s float32, y backend.Buffer) {
	emu.Scale(d.buf(x).data, s, d.buf(y).data)
}

func (d *Device) AbsForward(x, y backend.Buffer) { emu.AbsForward(d.buf(x).data, d.buf(y).data) }
func (d *Device) AbsBackward(x, gy, gx backend.Buffer) {
	emu.AbsBackward(d.buf(x).data, d.buf(gy).data, d.buf(gx).data)
}

func (d *Device) TanhForward(x, y backend.Buffer) {
	emu.TanhForward(d.buf(x).data, d.buf(y).data, backend.GoExpFMA)
}

func (d *Device) TanhBackward(y, gy, gx backend.Buffer) {
	emu.TanhBackward(d.buf(y).data, d.buf(gy).data, d.buf(gx).data)
}

func (d *Device) GELUTanhForward(x, y, t backend.Buffer) {
	emu.GELUTanhForward(d.buf(x).data, d.buf(y).data, d.buf(t).data)
}

func (d *Device) GELUTanhBackward(x, t, gy, gx backend.Buffer) {
	emu.GELUTanhBackward(d.buf(x).data, d.buf(t).data, d.buf(gy).data, d.buf(gx).data)
}

func (d *Device) ReLUForward(x, y backend.Buffer) { emu.ReLUForward(d.buf(x).data, d.buf(y).data) }
func (d *Device) ReLUBackward(x, gy, gx backend.Buffer) {
	emu.ReLUBackward(d.buf(x).data, d.buf(gy).data, d.buf(gx).data)
}

func (d *Device) RMSNormForward(x, g backend.Buffer, rows, cols int, eps float32, y, xhat, rstd backend.Buffer) {
	emu.RMSNormForward(d.buf(x).data, d.buf(g).data, rows, cols, eps, d.buf(y).data, d.buf(xhat).data, d.buf(rstd).data)
}

func (d *Device) RMSNormBackward(gy, g, xhat, rstd backend.Buffer, rows, cols int, gx backend.Buffer) {
	emu.RMSNormBackward(d.buf(gy).data, d.buf(g).data, d.buf(xhat).data, d.buf(rstd).data, rows, cols, d.buf(gx).data)
}

func (d *Device) L2NormForward(x backend.Buffer, rows, cols int, eps float32, y, norm backend.Buffer) {
	emu.L2NormForward(d.buf(x).data, rows, cols, eps, d.buf(y).data, d.buf(norm).data)
}

func (d *Device) L2NormBackward(y, norm, gy backend.Buffer, rows, cols int, eps float32, gx backend.Buffer) {
	emu.L2NormBackward(d.buf(y).data, d.buf(norm).data, d.buf(gy).data, rows, cols, eps, d.buf(gx).data)
}

func (d *Device) RowDot(a, b backend.Buffer, rows, cols int, y backend.Buffer) {
	emu.RowDot(d.buf(a).data, d.buf(b).data, rows, cols, d.buf(y).data)
}

func (d *Device) RowScale(g, src backend.Buffer, cols int, dst backend.Buffer) {
	emu.RowScale(d.buf(g).data, d.buf(src).data, cols, d.buf(dst).data)
}

func (d *Device) CopyBlock(src backend.Buffer, srcLd, srcOff int, dst backend.Buffer, dstLd, dstOff, rows, width int) {
	emu.CopyBlock(d.buf(src).data, srcLd, srcOff, d.buf(dst).data, dstLd, dstOff, rows, width)
}

func (d *Device) Sum(x backend.Buffer, n int, mean bool, out backend.Buffer) {
	emu.Sum(d.span("Sum", x, 0, n), mean, d.buf(out).data)
}

func (d *Device) FillFrom(gy backend.Buffer, n int, mean bool, gx backend.Buffer) {
	emu.FillFrom(d.buf(gy).data, mean, d.span("FillFrom", gx, 0, n))
}

func (d *Device) LogSoftmaxRows(x backend.Buffer, rows, cols int, exp bool, y backend.Buffer) {
	emu.LogSoftmaxRows(d.buf(x).data, rows, cols, exp, backend.GoExpFMA, d.buf(y).data)
}

func (d *Device) SoftmaxRowsBackward(y, gy backend.Buffer, rows, cols int, log bool, gx backend.Buffer) {
	emu.SoftmaxRowsBackward(d.buf(y).data, d.buf(gy).data, rows, cols, log, d.buf(gx).data)
}

func (d *Device) CrossEntropyRows(x, targets backend.Buffer, rows, cols int, probs, losses backend.Buffer) {
	emu.CrossEntropyRows(d.buf(x).data, d.buf(targets).ints(), rows, cols, backend.GoExpFMA, d.buf(probs).data, d.buf(losses).data)
}

func (d *Device) CrossEntropySum(losses, targets backend.Buffer, rows, count int, out backend.Buffer) {
	emu.CrossEntropySum(d.buf(losses).data, d.buf(targets).ints()[:rows], count, d.buf(out).data)
}

func (d *Device) CrossEntropyBackward(probs, targets, gy backend.Buffer, rows, cols, count int, gx backend.Buffer) {
	emu.CrossEntropyBackward(d.buf(probs).data, d.buf(targets).ints()[:rows], d.buf(gy).data, cols, count, d.buf(gx).data)
}

func (d *Device) BiasMaskedSoftmaxRows(x backend.Buffer, rows, cols int, vis, bias backend.Buffer, biasRows int) {
	emu.BiasMaskedSoftmaxRows(d.buf(x).data, rows, cols, d.buf(vis).ints(), d.buf(bias).data, biasRows)
}

func (d *Device) SoftmaxBackwardBiasRows(p, g, ds backend.Buffer, rows, cols int, scale float32) {
	emu.SoftmaxBackwardBiasRows(d.buf(p).data, d.buf(g).data, d.buf(ds).data, rows, cols, scale)
}

func (d *Device) BucketBiasForward(w backend.Buffer, heads int, buckets backend.Buffer, n int, y backend.Buffer) {
	emu.BucketBiasForward(d.buf(w).data, heads, d.buf(buckets).ints()[:n], d.buf(y).data)
}

func (d *Device) BucketBiasBackward(g backend.Buffer, heads int, buckets backend.Buffer, n int, gw backend.Buffer) {
	emu.BucketBiasBackward(d.buf(g).data, heads, d.buf(buckets).ints()[:n], d.buf(gw).data)
}

func (d *Device) SumSquares(x backend.Buffer, n int, acc backend.Buffer) {
	emu.SumSquares(d.span("SumSquares", x, 0, n), d.buf(acc).data)
}

// The third slice: decoding.

func (d *Device) DecodeAttention(q, k, v backend.Buffer, heads, klen int, lens backend.Buffer, lenAdd int, causal bool, scale float32, bias backend.Buffer, biasRows int, probs, out backend.Buffer) {
	var bs []float32
	if bias != nil {
		bs = d.buf(bias).data
	}
	emu.DecodeAttention(d.buf(q).data, d.buf(k).data, d.buf(v).data, heads, klen, d.buf(lens).ints(), lenAdd, causal, scale,
		bs, biasRows, d.buf(probs).data, d.buf(out).data)
}

func (d *Device) WriteRowsAt(src backend.Buffer, cols int, pos backend.Buffer, cap int, dst backend.Buffer) {
	emu.WriteRowsAt(d.buf(src).data, cols, d.buf(pos).ints(), cap, d.buf(dst).data)
}

func (d *Device) AddInts(x backend.Buffer, c int) { emu.AddInts(d.buf(x).ints(), c) }

func (d *Device) DecodeBucketBias(w backend.Buffer, heads int, rb, pos backend.Buffer, cap int, y backend.Buffer) {
	emu.DecodeBucketBias(d.buf(w).data, heads, d.buf(rb).ints(), d.buf(pos).ints(), cap, d.buf(y).data)
}

func (d *Device) SampleRows(logits backend.Buffer, rows, vocab int, s backend.Sampling, states, cands, out backend.Buffer) {
	cc := s.CandCap(vocab)
	emu.SampleRows(d.span("SampleRows", logits, 0, rows*vocab), rows, vocab, s, backend.GoExpFMA,
		d.span("SampleRows", states, 0, 4*rows), d.span("SampleRows", cands, 0, 4*rows*cc), d.buf(out).ints()[:rows])
}
