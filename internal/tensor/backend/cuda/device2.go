//go:build cuda

package cuda

import (
	"fmt"

	"gorgonia.org/cu"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/cuda/ptx"
)

// The second slice of Device's kernels (kernels.h's second part): the
// operators of the other training types and gradient clipping. Kernels
// that compute math.Exp get backend.GoExpFMA: the host's path.

func flag(b bool) arg {
	if b {
		return intArg(1)
	}
	return intArg(0)
}

func (d *Device) atLeast(what string, n int, xs ...backend.Buffer) {
	for _, x := range xs {
		if d.buf(x).n < n {
			panic(fmt.Sprintf("cuda: %s: a buffer of %d values, want at least %d", what, d.buf(x).n, n))
		}
	}
}

func (d *Device) Sub(a, b, y backend.Buffer) {
	n := d.buf(a).n
	d.same("Sub", n, b, y)
	d.launch(func() cu.Function { return d.b.fns.sub }, ptx.Sub, n, d.ptr(a), d.ptr(b), d.ptr(y), intArg(n))
}

func (d *Device) Neg(x, y backend.Buffer) {
	n := d.buf(x).n
	d.same("Neg", n, y)
	d.launch(func() cu.Function { return d.b.fns.neg }, ptx.Neg, n, d.ptr(x), d.ptr(y), intArg(n))
}

func (d *Device) Scale(x backend.Buffer, s float32, y backend.Buffer) {
	n := d.buf(x).n
	d.same("Scale", n, y)
	d.launch(func() cu.Function { return d.b.fns.scale }, ptx.Scale, n, d.ptr(x), floatArg(s), d.ptr(y), intArg(n))
}

func (d *Device) AbsForward(x, y backend.Buffer) {
	n := d.buf(x).n
	d.same("AbsForward", n, y)
	d.launch(func() cu.Function { return d.b.fns.absForward }, ptx.AbsForward, n, d.ptr(x), d.ptr(y), intArg(n))
}

func (d *Device) AbsBackward(x, gy, gx backend.Buffer) {
	n := d.buf(x).n
	d.same("AbsBackward", n, gy, gx)
	d.launch(func() cu.Function { return d.b.fns.absBackward }, ptx.AbsBackward, n, d.ptr(x), d.ptr(gy), d.ptr(gx), intArg(n))
}

func (d *Device) TanhForward(x, y backend.Buffer) {
	n := d.buf(x).n
	d.same("TanhForward", n, y)
	d.launch(func() cu.Function { return d.b.fns.tanhForward }, ptx.TanhForward, n, d.ptr(x), d.ptr(y), flag(backend.GoExpFMA), intArg(n))
}

func (d *Device) TanhBackward(y, gy, gx backend.Buffer) {
	n := d.buf(y).n
	d.same("TanhBackward", n, gy, gx)
	d.launch(func() cu.Function { return d.b.fns.tanhBackward }, ptx.TanhBackward, n, d.ptr(y), d.ptr(gy), d.ptr(gx), intArg(n))
}

func (d *Device) GELUTanhForward(x, y, t backend.Buffer) {
	n := d.buf(x).n
	d.same("GELUTanhForward", n, y, t)
	d.launch(func() cu.Function { return d.b.fns.geluTanhForward }, ptx.GELUTanhForward, n, d.ptr(x), d.ptr(y), d.ptr(t), intArg(n))
}

func (d *Device) GELUTanhBackward(x, t, gy, gx backend.Buffer) {
	n := d.buf(x).n
	d.same("GELUTanhBackward", n, t, gy, gx)
	d.launch(func() cu.Function { return d.b.fns.geluTanhBackward }, ptx.GELUTanhBackward, n, d.ptr(x), d.ptr(t), d.ptr(gy), d.ptr(gx), intArg(n))
}

func (d *Device) ReLUForward(x, y backend.Buffer) {
	n := d.buf(x).n
	d.same("ReLUForward", n, y)
	d.launch(func() cu.Function { return d.b.fns.reluForward }, ptx.ReLUForward, n, d.ptr(x), d.ptr(y), intArg(n))
}

func (d *Device) ReLUBackward(x, gy, gx backend.Buffer) {
	n := d.buf(x).n
	d.same("ReLUBackward", n, gy, gx)
	d.launch(func() cu.Function { return d.b.fns.reluBackward }, ptx.ReLUBackward, n, d.ptr(x), d.ptr(gy), d.ptr(gx), intArg(n))
}

func (d *Device) RMSNormForward(x, g backend.Buffer, rows, cols int, eps float32, y, xhat, rstd backend.Buffer) {
	d.same("RMSNormForward", rows*cols, x, y, xhat)
	d.same("RMSNormForward", cols, g)
	d.same("RMSNormForward", rows, rstd)
	d.launch(func() cu.Function { return d.b.fns.rmsNormForward }, ptx.RMSNormForward, rows,
		d.ptr(x), d.ptr(g), intArg(rows), intArg(cols), floatArg(eps), d.ptr(y), d.ptr(xhat), d.ptr(rstd))
}

func (d *Device) RMSNormBackward(gy, g, xhat, rstd backend.Buffer, rows, cols int, gx backend.Buffer) {
	d.same("RMSNormBackward", rows*cols, gy, xhat, gx)
	d.same("RMSNormBackward", cols, g)
	d.same("RMSNormBackward", rows, rstd)
	d.launch(func() cu.Function { return d.b.fns.rmsNormBackward }, ptx.RMSNormBackward, rows,
		d.ptr(gy), d.ptr(g), d.ptr(xhat), d.ptr(rstd), intArg(rows), intArg(cols), d.ptr(gx))
}

func (d *Device) L2NormForward(x backend.Buffer, rows, cols int, eps float32, y, norm backend.Buffer) {
	d.same("L2NormForward", rows*cols, x, y)
	d.same("L2NormForward", rows, norm)
	d.launch(func() cu.Function { return d.b.fns.l2NormForward }, ptx.L2NormForward, rows,
		d.ptr(x), intArg(rows), intArg(cols), floatArg(eps), d.ptr(y), d.ptr(norm))
}

func (d *Device) L2NormBackward(y, norm, gy backend.Buffer, rows, cols int, eps float32, gx backend.Buffer) {
	d.same("L2NormBackward", rows*cols, y, gy, gx)
	d.same("L2NormBackward", rows, norm)
	d.launch(func() cu.Function { return d.b.fns.l2NormBackward }, ptx.L2NormBackward, rows,
		d.ptr(y), d.ptr(norm), d.ptr(gy), intArg(rows), intArg(cols), floatArg(eps), d.ptr(gx))
}

func (d *Device) RowDot(a, b backend.Buffer, rows, cols int, y backend.Buffer) {
	d.same("RowDot", rows*cols, a, b)
	d.same("RowDot", rows, y)
	d.launch(func() cu.Function { return d.b.fns.rowDot }, ptx.RowDot, rows, d.ptr(a), d.ptr(b), intArg(rows), intArg(cols), d.ptr(y))
}

func (d *Device) RowScale(g, src backend.Buffer, cols int, dst backend.Buffer) {
	n := d.buf(src).n
	d.same("RowScale", n, dst)
	d.same("RowScale", n/max(cols, 1), g)
	d.launch(func() cu.Function { return d.b.fns.rowScale }, ptx.RowScale, n, d.ptr(g), d.ptr(src), intArg(cols), d.ptr(dst), intArg(n))
}

func (d *Device) CopyBlock(src backend.Buffer, srcLd, srcOff int, dst backend.Buffer, dstLd, dstOff, rows, width int) {
	if rows == 0 || width == 0 {
		return
	}
	if srcOff < 0 || dstOff < 0 || width > srcLd || width > dstLd {
		panic(fmt.Sprintf("cuda: CopyBlock: %dx%d block at %d (ld %d) into %d (ld %d)", rows, width, srcOff, srcLd, dstOff, dstLd))
	}
	d.atLeast("CopyBlock source", srcOff+(rows-1)*srcLd+width, src)
	d.atLeast("CopyBlock destination", dstOff+(rows-1)*dstLd+width, dst)
	d.launch(func() cu.Function { return d.b.fns.copyBlock }, ptx.CopyBlock, rows*width,
		d.ptr(src), intArg(srcLd), intArg(srcOff), d.ptr(dst), intArg(dstLd), intArg(dstOff), intArg(width), intArg(rows*width))
}

func (d *Device) Sum(x backend.Buffer, n int, mean bool, out backend.Buffer) {
	d.atLeast("Sum", n, x)
	d.same("Sum", 1, out)
	d.launch(func() cu.Function { return d.b.fns.sum }, ptx.Sum, 1, d.ptr(x), intArg(n), flag(mean), d.ptr(out))
}

func (d *Device) FillFrom(gy backend.Buffer, n int, mean bool, gx backend.Buffer) {
	d.same("FillFrom", 1, gy)
	d.atLeast("FillFrom", n, gx)
	d.launch(func() cu.Function { return d.b.fns.fillFrom }, ptx.FillFrom, n, d.ptr(gy), intArg(n), flag(mean), d.ptr(gx))
}

func (d *Device) LogSoftmaxRows(x backend.Buffer, rows, cols int, exp bool, y backend.Buffer) {
	d.same("LogSoftmaxRows", rows*cols, x, y)
	d.launch(func() cu.Function { return d.b.fns.logSoftmaxRows }, ptx.LogSoftmaxRows, rows,
		d.ptr(x), intArg(rows), intArg(cols), flag(exp), flag(backend.GoExpFMA), d.ptr(y))
}

func (d *Device) SoftmaxRowsBackward(y, gy backend.Buffer, rows, cols int, log bool, gx backend.Buffer) {
	d.same("SoftmaxRowsBackward", rows*cols, y, gy, gx)
	d.launch(func() cu.Function { return d.b.fns.softmaxRowsBackward }, ptx.SoftmaxRowsBackward, rows,
		d.ptr(y), d.ptr(gy), intArg(rows), intArg(cols), flag(log), d.ptr(gx))
}

func (d *Device) CrossEntropyRows(x, targets backend.Buffer, rows, cols int, probs, losses backend.Buffer) {
	d.same("CrossEntropyRows", rows*cols, x, probs)
	d.same("CrossEntropyRows targets", rows, targets)
	d.same("CrossEntropyRows losses", 2*rows, losses)
	d.launch(func() cu.Function { return d.b.fns.crossEntropyRows }, ptx.CrossEntropyRows, rows,
		d.ptr(x), d.ptr(targets), intArg(rows), intArg(cols), flag(backend.GoExpFMA), d.ptr(probs), d.ptr(losses))
}

func (d *Device) CrossEntropySum(losses, targets backend.Buffer, rows, count int, out backend.Buffer) {
	d.same("CrossEntropySum losses", 2*rows, losses)
	d.same("CrossEntropySum targets", rows, targets)
	d.same("CrossEntropySum", 1, out)
	d.launch(func() cu.Function { return d.b.fns.crossEntropySum }, ptx.CrossEntropySum, 1,
		d.ptr(losses), d.ptr(targets), intArg(rows), intArg(count), d.ptr(out))
}

func (d *Device) CrossEntropyBackward(probs, targets, gy backend.Buffer, rows, cols, count int, gx backend.Buffer) {
	d.same("CrossEntropyBackward", rows*cols, probs, gx)
	d.same("CrossEntropyBackward targets", rows, targets)
	d.same("CrossEntropyBackward", 1, gy)
	d.launch(func() cu.Function { return d.b.fns.crossEntropyBackward }, ptx.CrossEntropyBackward, rows*cols,
		d.ptr(probs), d.ptr(targets), d.ptr(gy), intArg(cols), intArg(count), d.ptr(gx), intArg(rows*cols))
}

func (d *Device) BiasMaskedSoftmaxRows(x backend.Buffer, rows, cols int, vis, bias backend.Buffer, biasRows int) {
	d.same("BiasMaskedSoftmaxRows", rows*cols, x)
	d.same("BiasMaskedSoftmaxRows", rows, vis)
	d.same("BiasMaskedSoftmaxRows bias", biasRows*cols, bias)
	d.launch(func() cu.Function { return d.b.fns.biasMaskedSoftmaxRows }, ptx.BiasMaskedSoftmaxRows, rows,
		d.ptr(x), intArg(rows), intArg(cols), d.ptr(vis), d.ptr(bias), intArg(biasRows))
}

func (d *Device) SoftmaxBackwardBiasRows(p, g, ds backend.Buffer, rows, cols int, scale float32) {
	d.same("SoftmaxBackwardBiasRows", rows*cols, p, g, ds)
	d.launch(func() cu.Function { return d.b.fns.softmaxBackwardBiasRows }, ptx.SoftmaxBackwardBiasRows, rows,
		d.ptr(p), d.ptr(g), d.ptr(ds), intArg(rows), intArg(cols), floatArg(scale))
}

func (d *Device) BucketBiasForward(w backend.Buffer, heads int, buckets backend.Buffer, n int, y backend.Buffer) {
	d.same("BucketBiasForward buckets", n, buckets)
	d.same("BucketBiasForward", heads*n, y)
	d.launch(func() cu.Function { return d.b.fns.bucketBiasForward }, ptx.BucketBiasForward, heads*n,
		d.ptr(w), intArg(heads), d.ptr(buckets), intArg(n), d.ptr(y), intArg(heads*n))
}

func (d *Device) BucketBiasBackward(g backend.Buffer, heads int, buckets backend.Buffer, n int, gw backend.Buffer) {
	d.same("BucketBiasBackward buckets", n, buckets)
	d.same("BucketBiasBackward", heads*n, g)
	d.launch(func() cu.Function { return d.b.fns.bucketBiasBackward }, ptx.BucketBiasBackward, heads,
		d.ptr(g), intArg(heads), d.ptr(buckets), intArg(n), d.ptr(gw))
}

func (d *Device) SumSquares(x backend.Buffer, n int, acc backend.Buffer) {
	d.atLeast("SumSquares", n, x)
	d.same("SumSquares", 2, acc)
	d.launch(func() cu.Function { return d.b.fns.sumSquares }, ptx.SumSquares, 1, d.ptr(x), intArg(n), d.ptr(acc))
}
