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

var _ backend.Kernels = (*Backend)(nil)

// blockSize is the number of threads per block of every kernel launch.
const blockSize = 256

// kernels are the entry points of ptx.Source, loaded by start.
type kernels struct {
	geluForward, geluBackward           cu.Function
	layerNormForward, layerNormBackward cu.Function
	maskedSoftmaxRows, adamW            cu.Function
	geluTanhForward, geluTanhBackward   cu.Function
	reluForward, reluBackward           cu.Function
	rmsNormForward, rmsNormBackward     cu.Function
	biasMaskedSoftmaxRows               cu.Function

	// Device-resident training (device.go).
	add, mul, gatherRows, scatterAddRows, broadcastRows, colSums cu.Function
	dropoutMask, attentionVisible, softmaxBackwardRows           cu.Function
	meanPool, meanPoolBackward, mseForward, mseBackward          cu.Function

	// The second slice (device2.go).
	sub, neg, scale, absForward, absBackward, tanhForward, tanhBackward cu.Function
	l2NormForward, l2NormBackward, rowDot, rowScale, copyBlock          cu.Function
	sum, fillFrom, logSoftmaxRows, softmaxRowsBackward                  cu.Function
	crossEntropyRows, crossEntropySum, crossEntropyBackward             cu.Function
	softmaxBackwardBiasRows, bucketBiasForward, bucketBiasBackward      cu.Function
	sumSquares                                                          cu.Function

	// Decoding (device3.go).
	decodeAttention, writeRowsAt, addInts, decodeBucketBias, sampleRows cu.Function

	// Mixed precision (device.go).
	toBF16 cu.Function
}

// loadKernels loads ptx.Source into the current context (the driver
// JIT-compiles the sm_60 PTX for the device) and looks up every entry.
func (b *Backend) loadKernels() error {
	mod, err := cu.LoadData(ptx.Source)
	if err != nil {
		return fmt.Errorf("loading the kernels' PTX: %w", err)
	}
	for _, e := range []struct {
		fn   *cu.Function
		name string
	}{
		{&b.fns.geluForward, ptx.GELUForward},
		{&b.fns.geluBackward, ptx.GELUBackward},
		{&b.fns.layerNormForward, ptx.LayerNormForward},
		{&b.fns.layerNormBackward, ptx.LayerNormBackward},
		{&b.fns.maskedSoftmaxRows, ptx.MaskedSoftmaxRows},
		{&b.fns.adamW, ptx.AdamW},
		{&b.fns.geluTanhForward, ptx.GELUTanhForward},
		{&b.fns.geluTanhBackward, ptx.GELUTanhBackward},
		{&b.fns.reluForward, ptx.ReLUForward},
		{&b.fns.reluBackward, ptx.ReLUBackward},
		{&b.fns.rmsNormForward, ptx.RMSNormForward},
		{&b.fns.rmsNormBackward, ptx.RMSNormBackward},
		{&b.fns.biasMaskedSoftmaxRows, ptx.BiasMaskedSoftmaxRows},
		{&b.fns.add, ptx.Add},
		{&b.fns.mul, ptx.Mul},
		{&b.fns.gatherRows, ptx.GatherRows},
		{&b.fns.scatterAddRows, ptx.ScatterAddRows},
		{&b.fns.broadcastRows, ptx.BroadcastRows},
		{&b.fns.colSums, ptx.ColSums},
		{&b.fns.dropoutMask, ptx.DropoutMask},
		{&b.fns.attentionVisible, ptx.AttentionVisible},
		{&b.fns.softmaxBackwardRows, ptx.SoftmaxBackwardRows},
		{&b.fns.meanPool, ptx.MeanPool},
		{&b.fns.meanPoolBackward, ptx.MeanPoolBackward},
		{&b.fns.mseForward, ptx.MSEForward},
		{&b.fns.mseBackward, ptx.MSEBackward},
		{&b.fns.sub, ptx.Sub},
		{&b.fns.neg, ptx.Neg},
		{&b.fns.scale, ptx.Scale},
		{&b.fns.absForward, ptx.AbsForward},
		{&b.fns.absBackward, ptx.AbsBackward},
		{&b.fns.tanhForward, ptx.TanhForward},
		{&b.fns.tanhBackward, ptx.TanhBackward},
		{&b.fns.l2NormForward, ptx.L2NormForward},
		{&b.fns.l2NormBackward, ptx.L2NormBackward},
		{&b.fns.rowDot, ptx.RowDot},
		{&b.fns.rowScale, ptx.RowScale},
		{&b.fns.copyBlock, ptx.CopyBlock},
		{&b.fns.sum, ptx.Sum},
		{&b.fns.fillFrom, ptx.FillFrom},
		{&b.fns.logSoftmaxRows, ptx.LogSoftmaxRows},
		{&b.fns.softmaxRowsBackward, ptx.SoftmaxRowsBackward},
		{&b.fns.crossEntropyRows, ptx.CrossEntropyRows},
		{&b.fns.crossEntropySum, ptx.CrossEntropySum},
		{&b.fns.crossEntropyBackward, ptx.CrossEntropyBackward},
		{&b.fns.softmaxBackwardBiasRows, ptx.SoftmaxBackwardBiasRows},
		{&b.fns.bucketBiasForward, ptx.BucketBiasForward},
		{&b.fns.bucketBiasBackward, ptx.BucketBiasBackward},
		{&b.fns.sumSquares, ptx.SumSquares},
		{&b.fns.decodeAttention, ptx.DecodeAttention},
		{&b.fns.writeRowsAt, ptx.WriteRowsAt},
		{&b.fns.addInts, ptx.AddInts},
		{&b.fns.decodeBucketBias, ptx.DecodeBucketBias},
		{&b.fns.sampleRows, ptx.SampleRows},
		{&b.fns.toBF16, ptx.ToBF16},
	} {
		if *e.fn, err = mod.Function(e.name); err != nil {
			mod.Unload()
			return fmt.Errorf("kernel %s: %w", e.name, err)
		}
	}
	b.mod = mod
	return nil
}

// job is one kernel call on the device goroutine: it uploads the inputs
// into scratch buffers, launches, copies the outputs back and returns the
// buffers to their free lists. After the first error every step does
// nothing and the error is reported.
type job struct {
	b     *Backend
	temps []devBuf
	err   error
}

// kernel runs f as a job on the device goroutine; a device error panics,
// as in Sgemm (the interface has no error result).
func (b *Backend) kernel(what string, f func(j *job)) {
	err := b.do(func() error {
		j := &job{b: b}
		defer func() {
			for _, t := range j.temps {
				b.putScratch(t)
			}
		}()
		f(j)
		return j.err
	})
	if err != nil {
		panic(fmt.Errorf("cuda: %s: %w", what, err))
	}
}

// alloc returns a scratch buffer of n 4-byte elements (n > 0).
func (j *job) alloc(n int) cu.DevicePtr {
	if j.err != nil {
		return 0
	}
	d, err := j.b.getScratch(n)
	if err != nil {
		j.err = err
		return 0
	}
	j.temps = append(j.temps, d)
	return d.ptr
}

func (j *job) upload(d cu.DevicePtr, p unsafe.Pointer, n int) {
	if j.err != nil {
		return
	}
	if err := cu.MemcpyHtoD(d, p, int64(n)*4); err != nil {
		j.err = fmt.Errorf("copying %d values to the device: %w", n, err)
	}
}

// in uploads x into a scratch buffer.
func (j *job) in(x []float32) cu.DevicePtr {
	d := j.alloc(len(x))
	j.upload(d, unsafe.Pointer(&x[0]), len(x))
	return d
}

// resident returns the kept device copy of x (backend.Resident), which a
// kernel then reads and updates in place, or else uploads x like in.
func (j *job) resident(x []float32) cu.DevicePtr {
	if d, ok := j.b.kept[keyOf(x)]; ok {
		return d.ptr
	}
	return j.in(x)
}

// ints uploads x into a scratch buffer.
func (j *job) ints(x []int32) cu.DevicePtr {
	d := j.alloc(len(x))
	j.upload(d, unsafe.Pointer(&x[0]), len(x))
	return d
}

// out is a scratch buffer for n outputs, not initialised.
func (j *job) out(n int) cu.DevicePtr { return j.alloc(n) }

// get copies len(x) values of d back into x. The copy is synchronous on the
// default stream, so it waits for the kernels launched before it.
func (j *job) get(x []float32, d cu.DevicePtr) {
	if j.err != nil {
		return
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&x[0]), d, int64(len(x))*4); err != nil {
		j.err = fmt.Errorf("copying %d values from the device: %w", len(x), err)
	}
}

// arg is a kernel argument as cu.Function.Launch reads it: it copies 8
// bytes from each parameter pointer, and the driver takes as many as the
// kernel's parameter has (8 for a pointer, 4 for an int or a float: the low
// four, little-endian). So every value is a uint64 holding the argument in
// its low bytes. kind is its letter in ptx.Params.
type arg struct {
	kind byte
	v    uint64
}

func ptrArg(d cu.DevicePtr) arg { return arg{'p', uint64(d)} }
func intArg(n int) arg          { return arg{'i', uint64(uint32(int32(n)))} }
func floatArg(v float32) arg    { return arg{'f', uint64(math.Float32bits(v))} }

// launch runs fn, the entry called name, over n threads (elements or
// rows): ceil(n/256) blocks of 256, on the default stream. The arguments
// must match ptx.Params[name].
func (j *job) launch(fn cu.Function, name string, n int, args ...arg) {
	if j.err != nil {
		return
	}
	vals := make([]uint64, len(args))
	kinds := make([]byte, len(args))
	for i, a := range args {
		vals[i], kinds[i] = a.v, a.kind
	}
	if string(kinds) != ptx.Params[name] {
		j.err = fmt.Errorf("launching %s with arguments %q, want %q", name, kinds, ptx.Params[name])
		return
	}
	params := make([]unsafe.Pointer, len(vals))
	for i := range vals {
		params[i] = unsafe.Pointer(&vals[i])
	}
	grid := (n + blockSize - 1) / blockSize
	if err := fn.Launch(grid, 1, 1, blockSize, 1, 1, 0, cu.NoStream, params); err != nil {
		j.err = fmt.Errorf("launching %s over %d threads: %w", name, n, err)
	}
}

// checkLen panics unless every slice has n values.
func checkLen(what string, n int, xs ...[]float32) {
	for _, x := range xs {
		if len(x) != n {
			panic(fmt.Sprintf("cuda: %s: a slice of %d values, want %d", what, len(x), n))
		}
	}
}

// checkSize panics unless n fits the kernels' 32-bit int parameters.
func checkSize(what string, ns ...int) {
	for _, n := range ns {
		if n < 0 || n > math.MaxInt32 {
			panic(fmt.Sprintf("cuda: %s: size %d out of range", what, n))
		}
	}
}

// GELUForward runs repro_gelu_forward; see backend.Kernels.
func (b *Backend) GELUForward(x, y, cdf []float32) {
	n := len(x)
	checkLen("GELUForward", n, y, cdf)
	checkSize("GELUForward", n)
	if n == 0 {
		return
	}
	b.kernel("GELUForward", func(j *job) {
		dx, dy, dc := j.in(x), j.out(n), j.out(n)
		j.launch(b.fns.geluForward, ptx.GELUForward, n, ptrArg(dx), ptrArg(dy), ptrArg(dc), intArg(n))
		j.get(y, dy)
		j.get(cdf, dc)
	})
}

// GELUBackward runs repro_gelu_backward; see backend.Kernels.
func (b *Backend) GELUBackward(x, cdf, gy, gx []float32) {
	n := len(x)
	checkLen("GELUBackward", n, cdf, gy, gx)
	checkSize("GELUBackward", n)
	if n == 0 {
		return
	}
	b.kernel("GELUBackward", func(j *job) {
		dx, dc, dgy, dgx := j.in(x), j.in(cdf), j.in(gy), j.out(n)
		j.launch(b.fns.geluBackward, ptx.GELUBackward, n, ptrArg(dx), ptrArg(dc), ptrArg(dgy), ptrArg(dgx), intArg(n))
		j.get(gx, dgx)
	})
}

// LayerNormForward runs repro_layer_norm_forward (one thread per row); see
// backend.Kernels.
func (b *Backend) LayerNormForward(x, g, bias []float32, rows, cols int, eps float32, y, xhat, rstd []float32) {
	checkSize("LayerNormForward", rows, cols, rows*cols)
	checkLen("LayerNormForward", rows*cols, x, y, xhat)
	checkLen("LayerNormForward", cols, g, bias)
	checkLen("LayerNormForward", rows, rstd)
	if rows == 0 {
		return
	}
	if cols == 0 {
		panic("cuda: LayerNormForward: rows of no columns")
	}
	b.kernel("LayerNormForward", func(j *job) {
		n := rows * cols
		dx, dg, db := j.in(x), j.in(g), j.in(bias)
		dy, dh, dr := j.out(n), j.out(n), j.out(rows)
		j.launch(b.fns.layerNormForward, ptx.LayerNormForward, rows,
			ptrArg(dx), ptrArg(dg), ptrArg(db), intArg(rows), intArg(cols), floatArg(eps),
			ptrArg(dy), ptrArg(dh), ptrArg(dr))
		j.get(y, dy)
		j.get(xhat, dh)
		j.get(rstd, dr)
	})
}

// LayerNormBackward runs repro_layer_norm_backward (one thread per row);
// see backend.Kernels.
func (b *Backend) LayerNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32) {
	checkSize("LayerNormBackward", rows, cols, rows*cols)
	checkLen("LayerNormBackward", rows*cols, gy, xhat, gx)
	checkLen("LayerNormBackward", cols, g)
	checkLen("LayerNormBackward", rows, rstd)
	if rows == 0 {
		return
	}
	if cols == 0 {
		panic("cuda: LayerNormBackward: rows of no columns")
	}
	b.kernel("LayerNormBackward", func(j *job) {
		dgy, dg, dh, dr, dgx := j.in(gy), j.in(g), j.in(xhat), j.in(rstd), j.out(rows*cols)
		j.launch(b.fns.layerNormBackward, ptx.LayerNormBackward, rows,
			ptrArg(dgy), ptrArg(dg), ptrArg(dh), ptrArg(dr), intArg(rows), intArg(cols), ptrArg(dgx))
		j.get(gx, dgx)
	})
}

// MaskedSoftmaxRows runs repro_masked_softmax_rows (one thread per row, in
// place); see backend.Kernels.
func (b *Backend) MaskedSoftmaxRows(x []float32, rows, cols int, visible []int32) {
	checkSize("MaskedSoftmaxRows", rows, cols, rows*cols)
	checkLen("MaskedSoftmaxRows", rows*cols, x)
	if len(visible) != rows {
		panic(fmt.Sprintf("cuda: MaskedSoftmaxRows: %d visible counts for %d rows", len(visible), rows))
	}
	for i, v := range visible {
		if int(v) > cols {
			panic(fmt.Sprintf("cuda: MaskedSoftmaxRows: row %d has %d visible entries of %d", i, v, cols))
		}
	}
	if rows == 0 || cols == 0 {
		return
	}
	b.kernel("MaskedSoftmaxRows", func(j *job) {
		dx, dv := j.in(x), j.ints(visible)
		j.launch(b.fns.maskedSoftmaxRows, ptx.MaskedSoftmaxRows, rows, ptrArg(dx), intArg(rows), intArg(cols), ptrArg(dv))
		j.get(x, dx)
	})
}

// GELUTanhForward runs repro_gelu_tanh_forward; see backend.Kernels.
func (b *Backend) GELUTanhForward(x, y, t []float32) {
	n := len(x)
	checkLen("GELUTanhForward", n, y, t)
	checkSize("GELUTanhForward", n)
	if n == 0 {
		return
	}
	b.kernel("GELUTanhForward", func(j *job) {
		dx, dy, dt := j.in(x), j.out(n), j.out(n)
		j.launch(b.fns.geluTanhForward, ptx.GELUTanhForward, n, ptrArg(dx), ptrArg(dy), ptrArg(dt), intArg(n))
		j.get(y, dy)
		j.get(t, dt)
	})
}

// GELUTanhBackward runs repro_gelu_tanh_backward; see backend.Kernels.
func (b *Backend) GELUTanhBackward(x, t, gy, gx []float32) {
	n := len(x)
	checkLen("GELUTanhBackward", n, t, gy, gx)
	checkSize("GELUTanhBackward", n)
	if n == 0 {
		return
	}
	b.kernel("GELUTanhBackward", func(j *job) {
		dx, dt, dgy, dgx := j.in(x), j.in(t), j.in(gy), j.out(n)
		j.launch(b.fns.geluTanhBackward, ptx.GELUTanhBackward, n, ptrArg(dx), ptrArg(dt), ptrArg(dgy), ptrArg(dgx), intArg(n))
		j.get(gx, dgx)
	})
}

// ReLUForward runs repro_relu_forward; see backend.Kernels.
func (b *Backend) ReLUForward(x, y []float32) {
	n := len(x)
	checkLen("ReLUForward", n, y)
	checkSize("ReLUForward", n)
	if n == 0 {
		return
	}
	b.kernel("ReLUForward", func(j *job) {
		dx, dy := j.in(x), j.out(n)
		j.launch(b.fns.reluForward, ptx.ReLUForward, n, ptrArg(dx), ptrArg(dy), intArg(n))
		j.get(y, dy)
	})
}

// ReLUBackward runs repro_relu_backward; see backend.Kernels.
func (b *Backend) ReLUBackward(x, gy, gx []float32) {
	n := len(x)
	checkLen("ReLUBackward", n, gy, gx)
	checkSize("ReLUBackward", n)
	if n == 0 {
		return
	}
	b.kernel("ReLUBackward", func(j *job) {
		dx, dgy, dgx := j.in(x), j.in(gy), j.out(n)
		j.launch(b.fns.reluBackward, ptx.ReLUBackward, n, ptrArg(dx), ptrArg(dgy), ptrArg(dgx), intArg(n))
		j.get(gx, dgx)
	})
}

// RMSNormForward runs repro_rms_norm_forward (one thread per row); see
// backend.Kernels.
func (b *Backend) RMSNormForward(x, g []float32, rows, cols int, eps float32, y, xhat, rstd []float32) {
	checkSize("RMSNormForward", rows, cols, rows*cols)
	checkLen("RMSNormForward", rows*cols, x, y, xhat)
	checkLen("RMSNormForward", cols, g)
	checkLen("RMSNormForward", rows, rstd)
	if rows == 0 {
		return
	}
	if cols == 0 {
		panic("cuda: RMSNormForward: rows of no columns")
	}
	b.kernel("RMSNormForward", func(j *job) {
		n := rows * cols
		dx, dg := j.in(x), j.in(g)
		dy, dh, dr := j.out(n), j.out(n), j.out(rows)
		j.launch(b.fns.rmsNormForward, ptx.RMSNormForward, rows,
			ptrArg(dx), ptrArg(dg), intArg(rows), intArg(cols), floatArg(eps), ptrArg(dy), ptrArg(dh), ptrArg(dr))
		j.get(y, dy)
		j.get(xhat, dh)
		j.get(rstd, dr)
	})
}

// RMSNormBackward runs repro_rms_norm_backward (one thread per row); see
// backend.Kernels.
func (b *Backend) RMSNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32) {
	checkSize("RMSNormBackward", rows, cols, rows*cols)
	checkLen("RMSNormBackward", rows*cols, gy, xhat, gx)
	checkLen("RMSNormBackward", cols, g)
	checkLen("RMSNormBackward", rows, rstd)
	if rows == 0 {
		return
	}
	if cols == 0 {
		panic("cuda: RMSNormBackward: rows of no columns")
	}
	b.kernel("RMSNormBackward", func(j *job) {
		dgy, dg, dh, dr, dgx := j.in(gy), j.in(g), j.in(xhat), j.in(rstd), j.out(rows*cols)
		j.launch(b.fns.rmsNormBackward, ptx.RMSNormBackward, rows,
			ptrArg(dgy), ptrArg(dg), ptrArg(dh), ptrArg(dr), intArg(rows), intArg(cols), ptrArg(dgx))
		j.get(gx, dgx)
	})
}

// BiasMaskedSoftmaxRows runs repro_bias_masked_softmax_rows (one thread
// per row, in place); see backend.Kernels.
func (b *Backend) BiasMaskedSoftmaxRows(x []float32, rows, cols int, visible []int32, bias []float32, biasRows int) {
	checkSize("BiasMaskedSoftmaxRows", rows, cols, rows*cols, biasRows, biasRows*cols)
	checkLen("BiasMaskedSoftmaxRows", rows*cols, x)
	checkLen("BiasMaskedSoftmaxRows", biasRows*cols, bias)
	if len(visible) != rows || biasRows < 1 {
		panic(fmt.Sprintf("cuda: BiasMaskedSoftmaxRows: %d visible counts for %d rows, %d bias rows", len(visible), rows, biasRows))
	}
	for i, v := range visible {
		if int(v) > cols {
			panic(fmt.Sprintf("cuda: BiasMaskedSoftmaxRows: row %d has %d visible entries of %d", i, v, cols))
		}
	}
	if rows == 0 || cols == 0 {
		return
	}
	b.kernel("BiasMaskedSoftmaxRows", func(j *job) {
		dx, dv, db := j.in(x), j.ints(visible), j.in(bias)
		j.launch(b.fns.biasMaskedSoftmaxRows, ptx.BiasMaskedSoftmaxRows, rows,
			ptrArg(dx), intArg(rows), intArg(cols), ptrArg(dv), ptrArg(db), intArg(biasRows))
		j.get(x, dx)
	})
}

// AdamW runs repro_adamw over one parameter (p, m and v updated in place);
// see backend.Kernels. A kept (Resident) p is updated in place on the
// device -- weights stay there between steps, and the next Sgemm uses the
// updated copy without an upload -- and copied back to the host, which the
// CPU-side operators (embedding lookups, checkpoints) read. The gradient
// and the moments travel both ways each call.
func (b *Backend) AdamW(p, g, m, v []float32, decay, b1, b2, stepSize, sqrtBC2, eps float32) {
	n := len(p)
	checkLen("AdamW", n, g, m, v)
	checkSize("AdamW", n)
	if n == 0 {
		return
	}
	b.kernel("AdamW", func(j *job) {
		dp, dg, dm, dv := j.resident(p), j.in(g), j.in(m), j.in(v)
		j.launch(b.fns.adamW, ptx.AdamW, n, ptrArg(dp), ptrArg(dg), ptrArg(dm), ptrArg(dv), intArg(n),
			floatArg(decay), floatArg(b1), floatArg(b2), floatArg(stepSize), floatArg(sqrtBC2), floatArg(eps))
		j.get(p, dp)
		j.get(m, dm)
		j.get(v, dv)
	})
}
