//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/cu"
	cublas "gorgonia.org/cu/blas"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/kernel"
)

func init() {
	backend.Register("cuda", "cuda", func(arg string) (backend.Backend, error) {
		ordinal := 0
		if arg != "" {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("device %q is not a device number (want cuda or cuda:N)", arg)
			}
			ordinal = n
		}
		return Open(ordinal)
	})
}

var (
	openMu sync.Mutex
	opened = map[int]*Backend{}
)

// Open returns the backend of device ordinal, creating it on first use;
// later calls share it (one context per device per process).
func Open(ordinal int) (*Backend, error) {
	openMu.Lock()
	defer openMu.Unlock()
	if b := opened[ordinal]; b != nil {
		return b, nil
	}
	b, err := newBackend(ordinal)
	if err != nil {
		return nil, err
	}
	opened[ordinal] = b
	return b, nil
}

// Backend runs sgemm and the operators' other kernels on one GPU. It
// implements backend.Backend, backend.Resident and backend.Kernels and is
// safe for concurrent use.
type Backend struct {
	ordinal int
	device  string
	calls   chan func()
	closeMu sync.RWMutex
	closed  bool
	devOnce sync.Once
	dev     *Device // Device: the backend.Device view (device.go)

	// Owned by the worker goroutine.
	impl    *cublas.Standard
	ctx     cu.CUContext
	mod     cu.Module // ptx.Source
	fns     kernels   // its entry points
	kept    map[hostKey]devBuf
	scratch map[int][]cu.DevicePtr // free buffers by log2 of their byte size
	failed  error                  // sticky: cuBLAS keeps its first error
	sblas   *stridedBLAS           // the strided-batched GEMMs' handle (gemm.go)
}

var (
	_ backend.Backend  = (*Backend)(nil)
	_ backend.Resident = (*Backend)(nil)
)

// hostKey identifies a host slice: its first element and its length. Holding
// the pointer keeps the slice alive, so the identity cannot be reused.
type hostKey struct {
	p *float32
	n int
}

type devBuf struct {
	ptr cu.DevicePtr
	n   int // float32 elements
}

func keyOf(x []float32) hostKey { return hostKey{&x[0], len(x)} }

func newBackend(ordinal int) (*Backend, error) {
	b := &Backend{
		ordinal: ordinal,
		calls:   make(chan func()),
		kept:    map[hostKey]devBuf{},
		scratch: map[int][]cu.DevicePtr{},
	}
	ready := make(chan error)
	go b.loop(ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return b, nil
}

// loop is the device goroutine: it owns the OS thread, the context and the
// cuBLAS handle, and runs every call in arrival order.
func (b *Backend) loop(ready chan<- error) {
	// Never unlocked: when loop returns, the thread (with the destroyed
	// context) exits with it instead of returning to the scheduler.
	runtime.LockOSThread()
	if err := b.start(); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for f := range b.calls {
		f()
	}
}

func (b *Backend) start() (err error) {
	n, err := cu.NumDevices()
	if err != nil {
		return fmt.Errorf("counting CUDA devices: %w", err)
	}
	if b.ordinal >= n {
		return fmt.Errorf("device %d requested, %d present", b.ordinal, n)
	}
	dev, err := cu.GetDevice(b.ordinal)
	if err != nil {
		return fmt.Errorf("device %d: %w", b.ordinal, err)
	}
	if b.device, err = dev.Name(); err != nil {
		return fmt.Errorf("device %d: %w", b.ordinal, err)
	}
	// MakeContext also makes the context current on this (locked) thread.
	if b.ctx, err = dev.MakeContext(cu.SchedAuto); err != nil {
		return fmt.Errorf("creating a context on device %d: %w", b.ordinal, err)
	}
	if err := b.loadKernels(); err != nil {
		b.ctx.Destroy()
		return fmt.Errorf("device %d: %w", b.ordinal, err)
	}
	defer func() {
		// cublas.New panics when cublasCreate fails.
		if r := recover(); r != nil {
			b.mod.Unload()
			b.ctx.Destroy()
			err = fmt.Errorf("creating the cuBLAS handle on device %d: %v", b.ordinal, r)
		}
	}()
	b.impl = cublas.New()
	if err := b.openStrided(); err != nil {
		b.impl.Close()
		b.mod.Unload()
		b.ctx.Destroy()
		return fmt.Errorf("device %d: %w", b.ordinal, err)
	}
	return nil
}

// do runs f on the device goroutine and returns its error.
func (b *Backend) do(f func() error) error {
	b.closeMu.RLock()
	defer b.closeMu.RUnlock()
	if b.closed {
		return errors.New("cuda backend used after Close")
	}
	done := make(chan error, 1)
	b.calls <- func() { done <- f() }
	return <-done
}

// Name reports "cuda:N (device name)".
func (b *Backend) Name() string { return fmt.Sprintf("cuda:%d (%s)", b.ordinal, b.device) }

// Sgemm runs cublasSgemm on the device; see backend.Backend. Inconsistent
// arguments panic with kernel.Check's message, as on the CPU; so does a
// device error (out of memory, a lost device), since the interface has no
// error result and the step cannot go on.
func (b *Backend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) {
	if err := kernel.Check(transA, transB, m, n, k, a, lda, bm, ldb, c, ldc); err != nil {
		panic(fmt.Errorf("cuda: %w", err))
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		// Only C is touched; not worth two copies.
		kernel.Sgemm(transA, transB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
		return
	}
	err := b.do(func() error { return b.sgemm(transA, transB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc) })
	if err != nil {
		panic(fmt.Errorf("cuda: sgemm m=%d n=%d k=%d: %w", m, n, k, err))
	}
}

// extent is the number of elements a stored rows x cols operand spans.
func extent(rows, cols, ld int) int { return (rows-1)*ld + cols }

func (b *Backend) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) error {
	if b.failed != nil {
		return b.failed
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	var temps []devBuf
	defer func() {
		for _, t := range temps {
			b.putScratch(t)
		}
	}()
	// operand returns the device copy of x: the kept one, or a scratch
	// buffer filled from the host when upload is set.
	operand := func(x []float32, need int, upload bool) (cu.DevicePtr, error) {
		if d, ok := b.kept[keyOf(x)]; ok {
			return d.ptr, nil
		}
		d, err := b.getScratch(need)
		if err != nil {
			return 0, err
		}
		temps = append(temps, d)
		if upload {
			if err := cu.MemcpyHtoD(d.ptr, unsafe.Pointer(&x[0]), int64(need)*4); err != nil {
				return 0, fmt.Errorf("copying %d floats to the device: %w", need, err)
			}
		}
		return d.ptr, nil
	}
	da, err := operand(a, extent(ar, ac, lda), true)
	if err != nil {
		return err
	}
	db, err := operand(bm, extent(br, bc, ldb), true)
	if err != nil {
		return err
	}
	// C is uploaded when beta != 0, and also when its rows are padded
	// (ldc > n): the copy back spans the padding, which must round-trip
	// unchanged.
	nc := extent(m, n, ldc)
	dc, err := operand(c, nc, beta != 0 || ldc != n)
	if err != nil {
		return err
	}
	// Row-major X is column-major X^T with the same leading dimension, so
	// C^T = op(B)^T op(A)^T is one column-major call with the operands
	// swapped and nothing transposed in memory.
	tr := func(t bool) blas.Transpose {
		if t {
			return blas.Trans
		}
		return blas.NoTrans
	}
	b.impl.Sgemm(tr(transB), tr(transA), n, m, k, alpha,
		devSlice(db, extent(br, bc, ldb)), ldb,
		devSlice(da, extent(ar, ac, lda)), lda,
		beta, devSlice(dc, nc), ldc)
	if err := b.impl.Err(); err != nil {
		b.failed = fmt.Errorf("cublasSgemm: %w (the cuBLAS handle keeps this error; reopen the backend)", err)
		return b.failed
	}
	// A synchronous copy on the default stream waits for the sgemm.
	if err := cu.MemcpyDtoH(unsafe.Pointer(&c[0]), dc, int64(nc)*4); err != nil {
		return fmt.Errorf("copying %d floats from the device: %w", nc, err)
	}
	return nil
}

// devSlice presents device memory as a []float32 for the cublas package,
// which passes &s[0] to cuBLAS. The memory is not Go's: the slice must never
// be read or written from Go, and the garbage collector ignores it.
func devSlice(p cu.DevicePtr, n int) []float32 {
	return unsafe.Slice((*float32)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}

func sizeClass(n int) int { return bits.Len(uint(n*4 - 1)) }

func (b *Backend) getScratch(n int) (devBuf, error) {
	cl := sizeClass(n)
	if free := b.scratch[cl]; len(free) > 0 {
		p := free[len(free)-1]
		b.scratch[cl] = free[:len(free)-1]
		return devBuf{p, n}, nil
	}
	p, err := cu.MemAlloc(int64(1) << cl)
	if err != nil {
		return devBuf{}, fmt.Errorf("allocating %d bytes on the device: %w", int64(1)<<cl, err)
	}
	return devBuf{p, n}, nil
}

func (b *Backend) putScratch(d devBuf) {
	cl := sizeClass(d.n)
	b.scratch[cl] = append(b.scratch[cl], d.ptr)
}

// Keep uploads x and makes later Sgemm calls that pass exactly x (same first
// element, same length) use the device copy. Keeping a kept slice refreshes
// it, like Changed.
func (b *Backend) Keep(x []float32) {
	if len(x) == 0 {
		return
	}
	err := b.do(func() error {
		d, ok := b.kept[keyOf(x)]
		if !ok {
			p, err := cu.MemAlloc(int64(len(x)) * 4)
			if err != nil {
				return fmt.Errorf("allocating %d floats on the device: %w", len(x), err)
			}
			d = devBuf{p, len(x)}
			b.kept[keyOf(x)] = d
		}
		return cu.MemcpyHtoD(d.ptr, unsafe.Pointer(&x[0]), int64(len(x))*4)
	})
	if err != nil {
		panic(fmt.Errorf("cuda: Keep: %w", err))
	}
}

// Changed re-uploads a kept x after the host changed it; for a slice that is
// not kept it does nothing.
func (b *Backend) Changed(x []float32) {
	if len(x) == 0 {
		return
	}
	err := b.do(func() error {
		if d, ok := b.kept[keyOf(x)]; ok {
			return cu.MemcpyHtoD(d.ptr, unsafe.Pointer(&x[0]), int64(len(x))*4)
		}
		return nil
	})
	if err != nil {
		panic(fmt.Errorf("cuda: Changed: %w", err))
	}
}

// Release frees the device copy of a kept x.
func (b *Backend) Release(x []float32) {
	if len(x) == 0 {
		return
	}
	err := b.do(func() error {
		d, ok := b.kept[keyOf(x)]
		if !ok {
			return nil
		}
		delete(b.kept, keyOf(x))
		return cu.MemFree(d.ptr)
	})
	if err != nil {
		panic(fmt.Errorf("cuda: Release: %w", err))
	}
}

// Kept reports how many slices are resident on the device.
func (b *Backend) Kept() int {
	var n int
	_ = b.do(func() error { n = len(b.kept); return nil })
	return n
}

// Close frees every device buffer, destroys the cuBLAS handle, unloads the
// kernels and destroys the context, and ends the device goroutine. Later calls panic; Open creates a
// fresh backend.
func (b *Backend) Close() error {
	openMu.Lock()
	if opened[b.ordinal] == b {
		delete(opened, b.ordinal)
	}
	openMu.Unlock()
	err := b.do(func() error {
		var errs []error
		for _, d := range b.kept {
			errs = append(errs, cu.MemFree(d.ptr))
		}
		for _, free := range b.scratch {
			for _, p := range free {
				errs = append(errs, cu.MemFree(p))
			}
		}
		b.kept, b.scratch = nil, nil
		errs = append(errs, b.closeStrided(), b.impl.Close(), b.mod.Unload(), b.ctx.Destroy())
		return errors.Join(errs...)
	})
	b.closeMu.Lock()
	if !b.closed {
		b.closed = true
		close(b.calls)
	}
	b.closeMu.Unlock()
	return err
}
