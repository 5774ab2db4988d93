package optim

import (
	"fmt"
	"math"
	"slices"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor"
	"repro/internal/tensor/backend"
)

// The optimiser on a device. When the parameters are placed on a device
// (tensor.Place), Step runs the AdamW kernel there: weights, gradients and
// moments stay in device memory and nothing crosses per step. The moments
// are uploaded the first time (only when not all zero: a fresh optimiser
// allocates zeroed device memory instead) and are stale on the host until
// Sync; the weights are stale on the host until tensor.Fetch.

type deviceState struct {
	dev  backend.Device
	m, v []backend.Buffer
}

// device returns the device of the parameters when they are placed: all of
// them or none (a mix panics: a programming error of the caller).
func (o *Params) device() (backend.Device, bool) {
	var dev backend.Device
	placed := 0
	for _, p := range o.params {
		if d, _, ok := tensor.DeviceValue(p); ok {
			if dev != nil && d != dev {
				panic("optim: parameters on two devices")
			}
			dev = d
			placed++
		}
	}
	if placed != 0 && placed != len(o.params) {
		panic(fmt.Sprintf("optim: %d of %d parameters placed on the device: place all or none", placed, len(o.params)))
	}
	return dev, dev != nil
}

func (o *Params) stepDevice(dev backend.Device) {
	a := o.opt
	if o.ds == nil || o.ds.dev != dev {
		o.ds = &deviceState{dev: dev, m: make([]backend.Buffer, len(o.params)), v: make([]backend.Buffer, len(o.params))}
		up := func(x []float32) backend.Buffer {
			b := dev.Alloc(max(len(x), 1))
			if slices.ContainsFunc(x, func(v float32) bool { return v != 0 }) {
				dev.Upload(b, 0, x, "optimizer state")
			}
			return b
		}
		for i := range o.params {
			o.ds.m[i], o.ds.v[i] = up(a.M[i]), up(a.V[i])
		}
	}
	b1, b2, eps := float32(a.Beta1), float32(a.Beta2), float32(a.Eps)
	for i, p := range o.params {
		g, ok := tensor.DeviceGrad(p)
		if !ok {
			continue // no gradient: skipped, not counted (PyTorch's rule)
		}
		_, pb, _ := tensor.DeviceValue(p)
		decay, stepSize, sqrtBC2 := a.count(i, o.lr, o.decay[i])
		dev.AdamW(pb, g, o.ds.m[i], o.ds.v[i], decay, b1, b2, stepSize, sqrtBC2, eps)
		tensor.MarkDeviceChanged(p)
	}
	for _, p := range o.params {
		tensor.ZeroDeviceGrad(p)
		p.ZeroGrad()
	}
}

// Sync copies the device moments back into State's M and V (counted as
// "optimizer state"), for a checkpoint; it does nothing when the
// optimiser has not run on a device.
func (o *Params) Sync() {
	if o.ds == nil {
		return
	}
	for i := range o.params {
		o.ds.dev.Download(o.opt.M[i], o.ds.m[i], 0, "optimizer state")
		o.ds.dev.Download(o.opt.V[i], o.ds.v[i], 0, "optimizer state")
	}
}

// Release syncs and frees the device moments; a later device Step uploads
// them again.
func (o *Params) Release() {
	if o.ds == nil {
		return
	}
	o.Sync()
	for i := range o.params {
		o.ds.dev.Free(o.ds.m[i])
		o.ds.dev.Free(o.ds.v[i])
	}
	o.ds = nil
}

// ClipDeviceGradNorm is ClipGradNorm over the device gradients of placed
// parameters (tensor.DeviceGrad; parameters without one are skipped, as a
// nil gradient is): the float64 sum of squares is accumulated on the
// device in parameter order by one thread (ClipGradNorm's order, so the
// same bits), only that sum comes down (8 bytes, labelled "gradient
// norm"), and the gradients are scaled on the device. It returns the norm
// before clipping; maxNorm <= 0 only measures.
func ClipDeviceGradNorm(dev backend.Device, params []mat.Tensor, maxNorm float64) float64 {
	acc := dev.Alloc(2)
	defer dev.Free(acc)
	var grads []backend.Buffer
	for _, p := range params {
		g, ok := tensor.DeviceGrad(p)
		if !ok {
			continue
		}
		grads = append(grads, g)
		dev.SumSquares(g, p.Size(), acc)
	}
	var h [2]float32
	dev.Download(h[:], acc, 0, "gradient norm")
	norm := math.Sqrt(math.Float64frombits(uint64(math.Float32bits(h[1]))<<32 | uint64(math.Float32bits(h[0]))))
	if maxNorm > 0 && !math.IsNaN(norm) {
		if c := maxNorm / (norm + 1e-6); c < 1 {
			cf := float32(c)
			for _, g := range grads {
				dev.Scale(g, cf, g)
			}
		}
	}
	return norm
}

// ScaleDeviceGrads multiplies the device gradients of placed parameters
// by s (float32, as the trainer's division by the number of accumulated
// micro-batches).
func ScaleDeviceGrads(params []mat.Tensor, s float32) {
	for _, p := range params {
		if g, ok := tensor.DeviceGrad(p); ok {
			dev, _, _ := tensor.DeviceValue(p)
			dev.Scale(g, s, g)
		}
	}
}
