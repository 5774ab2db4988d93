package trainer

import (
	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/optim"
)

// Training on a device. When the run's backend has a device (the CUDA
// backend, or the emulated one, "emu": backend.NewDeviceOf), the
// parameters are placed there for the whole run (tensor.Place) and the
// AdamW moments live beside them (optim.AdamW.ToDevice): every operator
// with a device path runs there (internal/tensor/device.go), the
// gradients stay there, accumulation's scaling, clipping (only the
// float64 sum of squares comes down: the logged gradient norm) and AdamW
// run there, and per update only the batch goes up and the logged scalars
// come down. The arithmetic is the host's, so a run on the emulated
// device ends with the CPU's weights bit for bit (on a GPU, cuBLAS's
// GEMMs differ in the last bits).
//
// The host copies are brought back where the host needs them: before an
// evaluation (the weights are fetched and the parameters unplaced, so the
// evaluation runs on the host as it would on the CPU, then placed again:
// twice the weights per evaluation), before a snapshot (weights and
// moments), and at the end. What each update copied is measured and
// reported (Progress.Copied*, Result.Device, Drive's log lines); the
// other copies (placing, evaluations, snapshots, the end) are counted
// apart.

// DeviceReport is what a run on a device copied between host and device.
type DeviceReport struct {
	Device string // the device's name
	// Precision is the GEMMs' arithmetic (Config.Precision).
	Precision backend.Precision
	// Updates is the number of updates measured; StepUp and StepDown are
	// their bytes up and down in all, MaxStepUp and MaxStepDown the
	// largest of one update.
	Updates                int
	StepUp, StepDown       int64
	MaxStepUp, MaxStepDown int64
	// LastStep is the last update's copies by label.
	LastStep backend.Copies
	// Other is everything else: placing the weights (and, on a resume,
	// the moments), the evaluations' fetch and re-placing, the snapshots
	// and the final fetch.
	Other backend.Copies
	// Leaked is the number of device buffers still allocated after the
	// run gave its memory back, where the device can tell (the emulated
	// one): 0 unless something kept a value of a step's graph.
	Leaked int
}

// onDevice is a run's device state.
type onDevice struct {
	dev     backend.Device
	leaves  []mat.Tensor
	moments *optim.Moments
	placed  bool
	start   backend.Copies // at the start of the current update
	last    backend.Copies // the last update's copies
	report  DeviceReport
}

// placeOnDevice places the parameters and the moments on the backend's
// device when it has one (and the default Backward is in use), and says
// whether it did.
func (r *run) placeOnDevice() bool {
	if r.t.Backward != nil {
		return false
	}
	dev, ok := backend.NewDeviceOf(backend.Current())
	if !ok {
		return false
	}
	if r.c.Precision != backend.FP32 {
		pd, ok := dev.(backend.PrecisionDevice)
		if !ok {
			return false // start reports it
		}
		pd.SetGemmPrecision(r.c.Precision)
	}
	d := &onDevice{dev: dev, report: DeviceReport{Device: dev.Name(), Precision: r.c.Precision}}
	for _, p := range r.t.Params {
		d.leaves = append(d.leaves, p.Param)
	}
	before := dev.Copies()
	tensor.Place(dev, d.leaves...)
	d.placed = true
	d.moments = r.opt.ToDevice(dev)
	d.report.Other = dev.Copies().Since(before)
	r.dev = d
	return true
}

// other runs f and counts its copies as Other.
func (d *onDevice) other(f func()) {
	before := d.dev.Copies()
	f()
	d.report.Other = addCopies(d.report.Other, d.dev.Copies().Since(before))
}

func addCopies(a, b backend.Copies) backend.Copies {
	s := backend.Copies{Up: a.Up + b.Up, Down: a.Down + b.Down, UpBytes: a.UpBytes + b.UpBytes, DownBytes: a.DownBytes + b.DownBytes,
		ByLabel: map[string]backend.Copy{}}
	for _, c := range []backend.Copies{a, b} {
		for l, x := range c.ByLabel {
			y := s.ByLabel[l]
			y.Up, y.Down, y.UpBytes, y.DownBytes = y.Up+x.Up, y.Down+x.Down, y.UpBytes+x.UpBytes, y.DownBytes+x.DownBytes
			s.ByLabel[l] = y
		}
	}
	return s
}

// beginUpdate and endUpdate bracket one update's copies.
func (d *onDevice) beginUpdate() { d.start = d.dev.Copies() }

func (d *onDevice) endUpdate() {
	c := d.dev.Copies().Since(d.start)
	d.last = c
	rep := &d.report
	rep.Updates++
	rep.StepUp += c.UpBytes
	rep.StepDown += c.DownBytes
	rep.MaxStepUp = max(rep.MaxStepUp, c.UpBytes)
	rep.MaxStepDown = max(rep.MaxStepDown, c.DownBytes)
	rep.LastStep = c
}

// gradients divides the accumulated device gradients by the number of
// micro-batches (when more than one), clips them and returns their norm
// before clipping: update's host code on the device.
func (d *onDevice) gradients(micro int, maxNorm float64) float64 {
	if micro > 1 {
		optim.ScaleDeviceGrads(d.leaves, 1/float32(micro))
	}
	return optim.ClipDeviceGradNorm(d.dev, d.leaves, maxNorm)
}

// step is AdamW on the device, then the gradients are dropped.
func (d *onDevice) step(opt *optim.AdamW, lr float64, decay []float64) {
	opt.StepDevice(d.moments, d.leaves, lr, decay)
	for _, l := range d.leaves {
		tensor.ZeroDeviceGrad(l)
		l.ZeroGrad()
	}
}

// suspend fetches the weights and unplaces the parameters (an evaluation
// runs on the host); resume places them again.
func (d *onDevice) suspend() {
	d.other(func() { tensor.Unplace(d.leaves...) })
	d.placed = false
}

func (d *onDevice) resume() {
	d.other(func() { tensor.Place(d.dev, d.leaves...) })
	d.placed = true
}

// sync brings weights and moments to the host (a snapshot).
func (d *onDevice) sync(opt *optim.AdamW) {
	d.other(func() {
		tensor.Fetch(d.leaves...)
		d.moments.Sync(opt)
	})
}

// leave brings weights and moments to the host and frees the device's
// copies; the run continues on nothing (it is ending). Safe to call twice.
func (d *onDevice) leave(opt *optim.AdamW) {
	if d.moments == nil {
		return
	}
	d.other(func() {
		if d.placed {
			tensor.Unplace(d.leaves...)
			d.placed = false
		}
		d.moments.Sync(opt)
	})
	d.moments.Free()
	d.moments = nil
	tensor.DropIntCache(d.dev)
	if l, ok := d.dev.(interface{ Live() (int, int64) }); ok {
		d.report.Leaked, _ = l.Live()
	}
}
