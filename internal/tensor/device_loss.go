package tensor

import (
	"github.com/nlpodyssey/spago/mat"
)

// The device paths of the reductions and the softmax family (see
// device.go): Sum and Mean, Softmax and LogSoftmax, CrossEntropy. The
// float64 sums over rows run in one device thread, in the host's order;
// exp and log are Go's (kernels.h's k_go_exp and k_go_log).

func (f *sumFn) temps() *devTemps          { return &f.dt }
func (f *rowSoftmaxFn) temps() *devTemps   { return &f.dt }
func (f *crossEntropyFn) temps() *devTemps { return &f.dt }

func (f *sumFn) forwardDevice() (mat.Tensor, error) {
	out := newDevVal(f.dt.dev, 1, 1)
	f.dt.dev.Sum(f.dt.operand(f.x), f.x.Size(), f.mean, out.buf)
	return wrapDev(out, f), nil
}

func (f *sumFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	n := f.x.Size()
	r, c := Dims(f.x)
	gx := f.dt.dev.Alloc(max(n, 1))
	if n > 0 {
		f.dt.dev.FillFrom(f.dt.gradIn(gy), n, f.mean, gx)
	}
	accGradDev(f.dt.dev, f.x, gx, r, c)
	return nil
}

func (f *rowSoftmaxFn) forwardDevice() (mat.Tensor, error) {
	r, c := Dims(f.x)
	y := newDevVal(f.dt.dev, r, c)
	if r > 0 {
		f.dt.dev.LogSoftmaxRows(f.dt.operand(f.x), r, c, !f.log, y.buf)
	}
	f.dy = y.buf // the node's value, alive until Release (as f.y)
	return wrapDev(y, f), nil
}

func (f *rowSoftmaxFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	gx := f.dt.dev.Alloc(max(r*c, 1))
	if r > 0 {
		f.dt.dev.SoftmaxRowsBackward(f.dy, f.dt.gradIn(gy), r, c, f.log, gx)
	}
	accGradDev(f.dt.dev, f.x, gx, r, c)
	return nil
}

// CrossEntropy: one thread per row writes the row's probabilities and
// its float64 loss, one thread sums the losses in row order; the targets
// are the batch's (uploaded through the integer cache) and the count of
// rows not ignored is the host's.

func (f *crossEntropyFn) forwardDevice() (mat.Tensor, error) {
	dev := f.dt.dev
	r, c := Dims(f.x)
	for _, t := range f.targets {
		if t != IgnoreIndex {
			f.count++
		}
	}
	out := newDevVal(dev, 1, 1)
	f.dprobs = f.dt.keep(dev.Alloc(max(r*c, 1)))
	if r > 0 {
		f.dtargets = f.dt.ints(f.targets, "cross-entropy targets")
		losses := dev.Alloc(2 * r)
		dev.CrossEntropyRows(f.dt.operand(f.x), f.dtargets, r, c, f.dprobs, losses)
		dev.CrossEntropySum(losses, f.dtargets, r, f.count, out.buf)
		dev.Free(losses)
	}
	return wrapDev(out, f), nil
}

func (f *crossEntropyFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() || f.count == 0 {
		return nil
	}
	r, c := Dims(f.x)
	gx := f.dt.dev.Alloc(max(r*c, 1))
	f.dt.dev.CrossEntropyBackward(f.dprobs, f.dtargets, f.dt.gradIn(gy), r, c, f.count, gx)
	accGradDev(f.dt.dev, f.x, gx, r, c)
	return nil
}
