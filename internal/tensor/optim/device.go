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

// Moments are an AdamW's moments in device memory (AdamW.ToDevice), for
// StepDevice; the host's M and V are stale until Sync.
type Moments struct {
	dev  backend.Device
	m, v []backend.Buffer
}

// ToDevice puts a's moments on dev: those not all zero are uploaded
// (counted as "optimizer state"), zero ones are allocated zeroed.
func (a *AdamW) ToDevice(dev backend.Device) *Moments {
	mo := &Moments{dev: dev, m: make([]backend.Buffer, len(a.M)), v: make([]backend.Buffer, len(a.V))}
	up := func(x []float32) backend.Buffer {
		b := dev.Alloc(max(len(x), 1))
		if slices.ContainsFunc(x, func(v float32) bool { return v != 0 }) {
			dev.Upload(b, 0, x, "optimizer state")
		}
		return b
	}
	for i := range a.M {
		mo.m[i], mo.v[i] = up(a.M[i]), up(a.V[i])
	}
	return mo
}

// StepDevice is Step for parameters placed on the moments' device
// (tensor.Place): each parameter with a device gradient
// (tensor.DeviceGrad) is updated there by the AdamW kernel, the same
// arithmetic as Step; one without is skipped and not counted, as a nil
// gradient. Nothing is copied.
func (a *AdamW) StepDevice(mo *Moments, params []mat.Tensor, lr float64, weightDecay []float64) {
	b1, b2, eps := float32(a.Beta1), float32(a.Beta2), float32(a.Eps)
	for i, p := range params {
		g, ok := tensor.DeviceGrad(p)
		if !ok {
			continue // no gradient: skipped, not counted (PyTorch's rule)
		}
		d, pb, ok := tensor.DeviceValue(p)
		if !ok || d != mo.dev {
			panic(fmt.Sprintf("optim: parameter %d is not placed on the moments' device", i))
		}
		decay, stepSize, sqrtBC2 := a.count(i, lr, weightDecay[i])
		mo.dev.AdamW(pb, g, mo.m[i], mo.v[i], decay, b1, b2, stepSize, sqrtBC2, eps)
		tensor.MarkDeviceChanged(p)
	}
}

// Sync copies the device moments into a's M and V (counted as "optimizer
// state"), for a checkpoint.
func (mo *Moments) Sync(a *AdamW) {
	for i := range mo.m {
		mo.dev.Download(a.M[i], mo.m[i], 0, "optimizer state")
		mo.dev.Download(a.V[i], mo.v[i], 0, "optimizer state")
	}
}

// Free frees the device moments (Sync first to keep them).
func (mo *Moments) Free() {
	for i := range mo.m {
		mo.dev.Free(mo.m[i])
		mo.dev.Free(mo.v[i])
	}
	mo.m, mo.v = nil, nil
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
	if o.ds == nil || o.ds.dev != dev {
		o.ds = o.opt.ToDevice(dev)
	}
	leaves := make([]mat.Tensor, len(o.params))
	for i, p := range o.params {
		leaves[i] = p
	}
	o.opt.StepDevice(o.ds, leaves, o.lr, o.decay)
	for _, p := range o.params {
		tensor.ZeroDeviceGrad(p)
		p.ZeroGrad()
	}
}

// Sync copies the device moments back into State's M and V (counted as
// "optimizer state"), for a checkpoint; it does nothing when the
// optimiser has not run on a device.
func (o *Params) Sync() {
	if o.ds != nil {
		o.ds.Sync(o.opt)
	}
}

// Release syncs and frees the device moments; a later device Step uploads
// them again.
func (o *Params) Release() {
	if o.ds == nil {
		return
	}
	o.ds.Sync(o.opt)
	o.ds.Free()
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
