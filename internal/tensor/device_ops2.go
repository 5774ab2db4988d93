package tensor

import (
	"github.com/nlpodyssey/spago/mat"
)

// The device paths of the second slice (see device.go): the operators of
// the other training types. Each mirrors its host loop as device_ops.go's.

func (u *unaryFn) temps() *devTemps      { return &u.dt }
func (f *concatFn) temps() *devTemps     { return &f.dt }
func (f *sliceColsFn) temps() *devTemps  { return &f.dt }
func (f *rowDotFn) temps() *devTemps     { return &f.dt }
func (f *geluTanhFn) temps() *devTemps   { return &f.dt }
func (f *reluFn) temps() *devTemps       { return &f.dt }
func (f *l2NormFn) temps() *devTemps     { return &f.dt }
func (f *rmsNormFn) temps() *devTemps    { return &f.dt }
func (f *bucketBiasFn) temps() *devTemps { return &f.dt }

// Tanh, Abs, Scale.

func (u *unaryFn) forwardDevice() (mat.Tensor, error) {
	dev := u.dt.dev
	r, c := Dims(u.x)
	X := u.dt.operand(u.x)
	y := newDevVal(dev, r, c)
	switch u.kind {
	case unaryTanh:
		dev.TanhForward(X, y.buf)
		u.dy = y.buf // the node's value, alive until Release (as u.y)
	case unaryAbs:
		dev.AbsForward(X, y.buf)
	case unaryScale:
		dev.Scale(X, u.s, y.buf)
	}
	return wrapDev(y, u), nil
}

func (u *unaryFn) backwardDevice(gy mat.Tensor) error {
	if !u.x.RequiresGrad() {
		return nil
	}
	dev := u.dt.dev
	r, c := Dims(u.x)
	G := u.dt.gradIn(gy)
	gx := dev.Alloc(max(r*c, 1))
	switch u.kind {
	case unaryTanh:
		dev.TanhBackward(u.dy, G, gx)
	case unaryAbs:
		dev.AbsBackward(u.dt.operand(u.x), G, gx)
	case unaryScale:
		dev.Scale(G, u.s, gx)
	}
	accGradDev(dev, u.x, gx, r, c)
	return nil
}

// ConcatCols, ConcatRows, SliceCols: block copies.

func (f *concatFn) forwardDevice() (mat.Tensor, error) {
	dev := f.dt.dev
	r, c := Dims(f.xs[0])
	if f.cols {
		c = 0
		for _, x := range f.xs {
			_, xc := Dims(x)
			c += xc
		}
	} else {
		r = 0
		for _, x := range f.xs {
			xr, _ := Dims(x)
			r += xr
		}
	}
	out := newDevVal(dev, r, c)
	off := 0
	for _, x := range f.xs {
		xr, xc := Dims(x)
		X := f.dt.operand(x)
		// Columns: rows of xc at column off; rows: whole rows from
		// element off.
		dev.CopyBlock(X, xc, 0, out.buf, c, off, xr, xc)
		if f.cols {
			off += xc
		} else {
			off += xr * xc
		}
	}
	return wrapDev(out, f), nil
}

func (f *concatFn) backwardDevice(gy mat.Tensor) error {
	dev := f.dt.dev
	G := f.dt.gradIn(gy)
	_, c := Dims(gy)
	off := 0
	for _, x := range f.xs {
		xr, xc := Dims(x)
		if x.RequiresGrad() {
			gx := dev.Alloc(max(xr*xc, 1))
			dev.CopyBlock(G, c, off, gx, xc, 0, xr, xc)
			accGradDev(dev, x, gx, xr, xc)
		}
		if f.cols {
			off += xc
		} else {
			off += xr * xc
		}
	}
	return nil
}

func (f *sliceColsFn) forwardDevice() (mat.Tensor, error) {
	r, c := Dims(f.x)
	w := f.hi - f.lo
	out := newDevVal(f.dt.dev, r, w)
	f.dt.dev.CopyBlock(f.dt.operand(f.x), c, f.lo, out.buf, w, 0, r, w)
	return wrapDev(out, f), nil
}

func (f *sliceColsFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	w := f.hi - f.lo
	gx := f.dt.dev.Alloc(max(r*c, 1))
	f.dt.dev.CopyBlock(f.dt.gradIn(gy), w, 0, gx, c, f.lo, r, w)
	accGradDev(f.dt.dev, f.x, gx, r, c)
	return nil
}

// RowDot.

func (f *rowDotFn) forwardDevice() (mat.Tensor, error) {
	r, c := Dims(f.a)
	out := newDevVal(f.dt.dev, r, 1)
	f.dt.dev.RowDot(f.dt.operand(f.a), f.dt.operand(f.b), r, c, out.buf)
	return wrapDev(out, f), nil
}

func (f *rowDotFn) backwardDevice(gy mat.Tensor) error {
	dev := f.dt.dev
	r, c := Dims(f.a)
	G := f.dt.gradIn(gy)
	if f.a.RequiresGrad() {
		d := dev.Alloc(max(r*c, 1))
		dev.RowScale(G, f.dt.operand(f.b), c, d)
		accGradDev(dev, f.a, d, r, c)
	}
	if f.b.RequiresGrad() {
		d := dev.Alloc(max(r*c, 1))
		dev.RowScale(G, f.dt.operand(f.a), c, d)
		accGradDev(dev, f.b, d, r, c)
	}
	return nil
}

// GELUTanh, ReLU.

func (f *geluTanhFn) forwardDevice() (mat.Tensor, error) {
	dev := f.dt.dev
	r, c := Dims(f.x)
	y := newDevVal(dev, r, c)
	f.dT = f.dt.keep(dev.Alloc(max(r*c, 1)))
	dev.GELUTanhForward(f.dt.operand(f.x), y.buf, f.dT)
	return wrapDev(y, f), nil
}

func (f *geluTanhFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	dev := f.dt.dev
	r, c := Dims(f.x)
	gx := dev.Alloc(max(r*c, 1))
	dev.GELUTanhBackward(f.dt.operand(f.x), f.dT, f.dt.gradIn(gy), gx)
	accGradDev(dev, f.x, gx, r, c)
	return nil
}

func (f *reluFn) forwardDevice() (mat.Tensor, error) {
	r, c := Dims(f.x)
	y := newDevVal(f.dt.dev, r, c)
	f.dt.dev.ReLUForward(f.dt.operand(f.x), y.buf)
	return wrapDev(y, f), nil
}

func (f *reluFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	gx := f.dt.dev.Alloc(max(r*c, 1))
	f.dt.dev.ReLUBackward(f.dt.operand(f.x), f.dt.gradIn(gy), gx)
	accGradDev(f.dt.dev, f.x, gx, r, c)
	return nil
}

// L2Normalize, RMSNorm.

func (f *l2NormFn) forwardDevice() (mat.Tensor, error) {
	dev := f.dt.dev
	r, c := Dims(f.x)
	y := newDevVal(dev, r, c)
	f.dnorm = f.dt.keep(dev.Alloc(max(r, 1)))
	if r > 0 {
		dev.L2NormForward(f.dt.operand(f.x), r, c, f.eps, y.buf, f.dnorm)
	}
	f.dy = y.buf
	return wrapDev(y, f), nil
}

func (f *l2NormFn) backwardDevice(gy mat.Tensor) error {
	if !f.x.RequiresGrad() {
		return nil
	}
	dev := f.dt.dev
	r, c := Dims(f.x)
	gx := dev.Alloc(max(r*c, 1))
	if r > 0 {
		dev.L2NormBackward(f.dy, f.dnorm, f.dt.gradIn(gy), r, c, f.eps, gx)
	}
	accGradDev(dev, f.x, gx, r, c)
	return nil
}

func (f *rmsNormFn) forwardDevice() (mat.Tensor, error) {
	dev := f.dt.dev
	r, c := Dims(f.x)
	y := newDevVal(dev, r, c)
	f.dxhat = f.dt.keep(dev.Alloc(max(r*c, 1)))
	f.drstd = f.dt.keep(dev.Alloc(max(r, 1)))
	if r > 0 {
		dev.RMSNormForward(f.dt.operand(f.x), f.dt.operand(f.g), r, c, f.eps, y.buf, f.dxhat, f.drstd)
	}
	return wrapDev(y, f), nil
}

func (f *rmsNormFn) backwardDevice(gy mat.Tensor) error {
	dev := f.dt.dev
	r, c := Dims(f.x)
	Gy := f.dt.gradIn(gy)
	if f.x.RequiresGrad() {
		gx := dev.Alloc(max(r*c, 1))
		if r > 0 {
			dev.RMSNormBackward(Gy, f.dt.operand(f.g), f.dxhat, f.drstd, r, c, gx)
		}
		accGradDev(dev, f.x, gx, r, c)
	}
	if f.g.RequiresGrad() {
		gr, gc := Dims(f.g)
		accGradDev(dev, f.g, gainGradDevice(dev, Gy, f.dxhat, r, c), gr, gc)
	}
	return nil
}

// BucketBias.

func (f *bucketBiasFn) forwardDevice() (mat.Tensor, error) {
	_, H := Dims(f.w)
	n := f.q * f.k
	out := newDevVal(f.dt.dev, H*f.q, f.k)
	f.dbuckets = f.dt.ints(f.buckets, "relative position buckets")
	if n > 0 {
		f.dt.dev.BucketBiasForward(f.dt.operand(f.w), H, f.dbuckets, n, out.buf)
	}
	return wrapDev(out, f), nil
}

func (f *bucketBiasFn) backwardDevice(gy mat.Tensor) error {
	if !f.w.RequiresGrad() {
		return nil
	}
	nb, H := Dims(f.w)
	n := f.q * f.k
	gw := f.dt.dev.Alloc(max(nb*H, 1))
	if n > 0 {
		f.dt.dev.BucketBiasBackward(f.dt.gradIn(gy), H, f.dbuckets, n, gw)
	}
	accGradDev(f.dt.dev, f.w, gw, nb, H)
	return nil
}
