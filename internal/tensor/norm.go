package tensor

import (
	"fmt"
	"math"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

type layerNormFn struct {
	x, g, b mat.Tensor
	eps     float32
	xhat    []float32
	rstd    []float32

	dt           devTemps
	dxhat, drstd backend.Buffer
}

// LayerNorm normalises each row of x to zero mean and unit variance
// (biased variance, eps inside the square root, as BERT), then applies
// the per-column gain g and bias b (each of x's width).
func LayerNorm(x, g, b mat.Tensor, eps float32) mat.Tensor {
	_, c := Dims(x)
	if g.Size() != c || b.Size() != c {
		panic(fmt.Sprintf("tensor.LayerNorm: width %d but gain has %d values and bias %d", c, g.Size(), b.Size()))
	}
	return run(&layerNormFn{x: x, g: g, b: b, eps: eps})
}

func (f *layerNormFn) Operands() []mat.Tensor { return []mat.Tensor{f.x, f.g, f.b} }

func (f *layerNormFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("LayerNorm", f.x, f.g, f.b); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	out := rawMatrix(r, c) // every row written below
	X, Y, G, B := Data(f.x), Data(out), Data(f.g), Data(f.b)
	f.xhat = allocRaw(r * c)
	f.rstd = allocRaw(r)
	if k, ok := kernels(); ok {
		k.LayerNormForward(X, G, B, r, c, f.eps, Y, f.xhat, f.rstd)
		return wrap(out, f), nil
	}
	ParallelFor(r, 8, func(lo, hi int) { layerNormRows(X, G, B, c, f.eps, Y, f.xhat, f.rstd, lo, hi) })
	return wrap(out, f), nil
}

func (f *layerNormFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	r, c := Dims(f.x)
	Gy, G := Data(gy), Data(f.g)
	if f.x.RequiresGrad() {
		gx := alloc(r * c)
		if k, ok := kernels(); ok {
			k.LayerNormBackward(Gy, G, f.xhat, f.rstd, r, c, gx)
		} else {
			layerNormGradX(Gy, G, f.xhat, f.rstd, r, c, gx)
		}
		accGrad(f.x, gx)
	}
	switch gg, bg := f.g.RequiresGrad(), f.b.RequiresGrad(); {
	case gg && bg: // one pass over Gy for both
		dg, db := gainBiasGrad(Gy, f.xhat, r, c)
		accGrad(f.g, dg)
		accGrad(f.b, db)
	case gg:
		accGrad(f.g, gainGrad(Gy, f.xhat, r, c))
	case bg:
		accGrad(f.b, colSums(Gy, r, c))
	}
	return nil
}

// gainGrad is a normalisation's gain gradient: the column sums of
// gy * xhat (rows x cols), each product rounded, each column summed in
// row order from +0 (parallel over columns, as colSums).
func gainGrad(gy, xhat []float32, r, c int) []float32 {
	out := alloc(c)
	ParallelFor(c, 64, func(lo, hi int) {
		if colProdSumsVec != nil && r > 0 && hi-lo >= 8 {
			n := (hi - lo) &^ 7
			colProdSumsVec(&out[lo], &gy[lo], &xhat[lo], r, n, c)
			lo += n
		}
		acc := out[lo:hi]
		for i := 0; i < r; i++ {
			a, b := gy[i*c+lo:i*c+hi], xhat[i*c+lo:i*c+hi]
			for j, v := range a {
				acc[j] += float32(v * b[j]) // rounded product, as the products were once stored
			}
		}
	})
	return out
}

// gainBiasGrad is gainGrad(gy, xhat, r, c) and colSums(gy, r, c), the
// LayerNorm gain's and bias's gradients, in one pass over gy: each
// column's two sums keep their row order (and the products their
// rounding), so the bits are those of the two passes.
func gainBiasGrad(gy, xhat []float32, r, c int) (dg, db []float32) {
	dg, db = alloc(c), alloc(c)
	ParallelFor(c, 64, func(lo, hi int) {
		if gainBiasVec != nil && r > 0 && hi-lo >= 8 {
			n := (hi - lo) &^ 7
			gainBiasVec(&dg[lo], &db[lo], &gy[lo], &xhat[lo], r, n, c)
			lo += n
		}
		ag, ab := dg[lo:hi], db[lo:hi]
		for i := 0; i < r; i++ {
			a, b := gy[i*c+lo:i*c+hi], xhat[i*c+lo:i*c+hi]
			for j, v := range a {
				ag[j] += float32(v * b[j])
				ab[j] += v
			}
		}
	})
	return dg, db
}

// gainBiasVec, where the CPU has AVX2, is colProdSumsVec into outP and
// colSumsVec of a into outS in one pass.
var gainBiasVec func(outP, outS, a, b *float32, rows, n, ld int)

// colProdSumsVec, where the CPU has AVX2, sets out[j] to the sum over rows
// of a[i*ld+j] * b[i*ld+j] (gainGrad's chain: each product rounded, then
// added to the column's sum in row order from +0) for j < n, n a positive
// multiple of 8.
var colProdSumsVec func(out, a, b *float32, rows, n, ld int)

// layerNormGradX is LayerNorm's input gradient on the CPU.
func layerNormGradX(Gy, G, xhat, rstd []float32, r, c int, gx []float32) {
	ParallelFor(r, 8, func(lo, hi int) {
		i := lo
		for ; layerNormGradSums8Vec != nil && c >= 8 && i+8 <= hi; i += 8 {
			gyr, xh, n := Gy[i*c:(i+8)*c], xhat[i*c:(i+8)*c], c&^7
			var a, b [8]float32
			layerNormGradSums8Vec(&gyr[0], &G[0], &xh[0], c, n, &a, &b)
			for q := 0; q < 8; q++ {
				g, h := gyr[q*c:(q+1)*c], xh[q*c:(q+1)*c]
				for j := n; j < c; j++ { // the chains' last c%8 elements
					dh := g[j] * G[j]
					a[q] += dh
					b[q] += dh * h[j]
				}
				layerNormGradRow(g, G, h, a[q]/float32(c), b[q]/float32(c), rstd[i+q], gx[(i+q)*c:(i+q+1)*c])
			}
		}
		for ; i+4 <= hi; i += 4 {
			var m1, m2 [4]float32
			layerNormGradSums4(Gy[i*c:(i+4)*c], G, xhat[i*c:(i+4)*c], c, &m1, &m2)
			for q := 0; q < 4; q++ {
				k := (i + q) * c
				layerNormGradRow(Gy[k:k+c], G, xhat[k:k+c], m1[q], m2[q], rstd[i+q], gx[k:k+c])
			}
		}
		for ; i < hi; i++ {
			gyr, xh := Gy[i*c:(i+1)*c], xhat[i*c:(i+1)*c]
			var s1, s2 float32
			for j, g := range gyr {
				dh := g * G[j]
				s1 += dh
				s2 += dh * xh[j]
			}
			layerNormGradRow(gyr, G, xh, s1/float32(c), s2/float32(c), rstd[i], gx[i*c:(i+1)*c])
		}
	})
}

// layerNormGradSums8Vec and rmsNormGradSums8Vec, where the CPU has AVX2,
// are the input gradients' row sums over j < n (n a positive multiple of
// 8) for the eight rows q ld apart at gy and xh, a lane per row, each in
// element order from +0: layerNormGradX's sums of dh = gy*g into a and of
// dh*xhat into b, rmsNormGradX's of gy*g*xhat into s.
var (
	layerNormGradSums8Vec func(gy, g, xh *float32, ld, n int, a, b *[8]float32)
	rmsNormGradSums8Vec   func(gy, g, xh *float32, ld, n int, s *[8]float32)
)

// layerNormGradSums4 sets m1[q] and m2[q] to the means of dh = gy*g and of
// dh*xhat over row q of the four rows of gy and xhat (c wide), each sum in
// element order from +0 as in layerNormGradX's single-row loop: the four
// rows' chains are independent, so running them in one loop overlaps
// their latencies without changing a sum.
func layerNormGradSums4(gy, G, xhat []float32, c int, m1, m2 *[4]float32) {
	g0, g1, g2, g3 := gy[:c], gy[c:2*c], gy[2*c:3*c], gy[3*c:4*c]
	h0, h1, h2, h3 := xhat[:c], xhat[c:2*c], xhat[2*c:3*c], xhat[3*c:4*c]
	G = G[:c]
	var a0, a1, a2, a3, b0, b1, b2, b3 float32
	for j, gj := range G {
		d0 := g0[j] * gj
		a0 += d0
		b0 += d0 * h0[j]
		d1 := g1[j] * gj
		a1 += d1
		b1 += d1 * h1[j]
		d2 := g2[j] * gj
		a2 += d2
		b2 += d2 * h2[j]
		d3 := g3[j] * gj
		a3 += d3
		b3 += d3 * h3[j]
	}
	fc := float32(c)
	*m1 = [4]float32{a0 / fc, a1 / fc, a2 / fc, a3 / fc}
	*m2 = [4]float32{b0 / fc, b1 / fc, b2 / fc, b3 / fc}
}

// layerNormGradRow sets d[j] = rs * (gy[j]*G[j] - m1 - xh[j]*m2), the
// first multiple of 8 elements by layerNormGradVec where the CPU has AVX2.
func layerNormGradRow(gy, G, xh []float32, m1, m2, rs float32, d []float32) {
	j := 0
	if layerNormGradVec != nil && len(d) >= 8 {
		j = len(d) &^ 7
		layerNormGradVec(&gy[0], &G[0], &xh[0], &d[0], j, m1, m2, rs)
	}
	for ; j < len(d); j++ {
		d[j] = rs * (gy[j]*G[j] - m1 - xh[j]*m2)
	}
}

// layerNormRows is LayerNorm's CPU forward over rows [lo, hi) of the c
// wide X: per row, the mean (a float64 sum in element order), rstd (a
// float64 sum of squared deviations in element order), then xhat and y.
// Each row's two sums are serial chains of float64 additions, latency
// bound alone but independent of the other rows' chains, so several rows
// run theirs together: eight in the vector lanes (layerNormStats8), else
// four in one loop (layerNormStats4); the rest one by one.
func layerNormRows(X, G, B []float32, c int, eps float32, Y, xhat, rstd []float32, lo, hi int) {
	i := lo
	for ; rowSums8Vec != nil && c >= 4 && i+8 <= hi; i += 8 {
		var mean, rs [8]float64
		layerNormStats8(X[i*c:(i+8)*c], c, eps, &mean, &rs)
		for q := 0; q < 8; q++ {
			k := (i + q) * c
			rstd[i+q] = float32(rs[q])
			layerNormRow(X[k:k+c], G, B, mean[q], rs[q], xhat[k:k+c], Y[k:k+c])
		}
	}
	for ; i+4 <= hi; i += 4 {
		var mean, rs [4]float64
		layerNormStats4(X[i*c:(i+4)*c], c, eps, &mean, &rs)
		for q := 0; q < 4; q++ {
			k := (i + q) * c
			rstd[i+q] = float32(rs[q])
			layerNormRow(X[k:k+c], G, B, mean[q], rs[q], xhat[k:k+c], Y[k:k+c])
		}
	}
	for ; i < hi; i++ {
		x := X[i*c : (i+1)*c]
		var sum float64
		for _, v := range x {
			sum += float64(v)
		}
		mean := sum / float64(c)
		var ss float64
		for _, v := range x {
			d := float64(v) - mean
			ss += d * d
		}
		rs := 1 / math.Sqrt(ss/float64(c)+float64(eps))
		rstd[i] = float32(rs)
		layerNormRow(x, G, B, mean, rs, xhat[i*c:(i+1)*c], Y[i*c:(i+1)*c])
	}
}

// layerNormStats8 is layerNormStats4 for eight c wide rows (c >= 4), the
// chains' first c&^3 elements by the vector routines (lanes are rows),
// the rest continuing each chain here.
func layerNormStats8(x []float32, c int, eps float32, mean, rs *[8]float64) {
	n := c &^ 3
	var s [8]float64
	rowSums8Vec(&x[0], c, n, &s)
	fc := float64(c)
	for q := range s {
		for _, v := range x[q*c+n : (q+1)*c] {
			s[q] += float64(v)
		}
		mean[q] = s[q] / fc
	}
	rowSqDev8Vec(&x[0], c, n, mean, &s)
	for q := range s {
		m := mean[q]
		for _, v := range x[q*c+n : (q+1)*c] {
			d := float64(v) - m
			s[q] += d * d
		}
		rs[q] = 1 / math.Sqrt(s[q]/fc+float64(eps))
	}
}

// rowSums8Vec and rowSqDev8Vec, where the CPU has AVX2, set s[q] to the
// float64 sum over j < n (n a positive multiple of 4) of row q's x[j],
// respectively of (x[j] - mean[q])^2, for the eight rows q ld apart at x,
// each in element order from +0: layerNormStats4's chains (RMSNorm's
// sum of squares with mean 0).
var (
	rowSums8Vec  func(x *float32, ld, n int, s *[8]float64)
	rowSqDev8Vec func(x *float32, ld, n int, mean, s *[8]float64)
)

// layerNormStats4 sets mean[q] and rs[q] (1/std) of row q of the four c
// wide rows of x, with layerNormRows' single-row chains.
func layerNormStats4(x []float32, c int, eps float32, mean, rs *[4]float64) {
	x0, x1, x2, x3 := x[:c], x[c:2*c], x[2*c:3*c], x[3*c:4*c]
	var s0, s1, s2, s3 float64
	for j, v := range x0 {
		s0 += float64(v)
		s1 += float64(x1[j])
		s2 += float64(x2[j])
		s3 += float64(x3[j])
	}
	fc := float64(c)
	m0, m1, m2, m3 := s0/fc, s1/fc, s2/fc, s3/fc
	var q0, q1, q2, q3 float64
	for j, v := range x0 {
		d0 := float64(v) - m0
		q0 += d0 * d0
		d1 := float64(x1[j]) - m1
		q1 += d1 * d1
		d2 := float64(x2[j]) - m2
		q2 += d2 * d2
		d3 := float64(x3[j]) - m3
		q3 += d3 * d3
	}
	e := float64(eps)
	*mean = [4]float64{m0, m1, m2, m3}
	*rs = [4]float64{1 / math.Sqrt(q0/fc+e), 1 / math.Sqrt(q1/fc+e), 1 / math.Sqrt(q2/fc+e), 1 / math.Sqrt(q3/fc+e)}
}

// layerNormRow sets xh[j] = float32((x[j] - mean) * rstd) in float64 and
// y[j] = xh[j]*G[j] + B[j], the first multiple of 8 elements by
// layerNormRowVec where the CPU has AVX2.
func layerNormRow(x, G, B []float32, mean, rstd float64, xh, y []float32) {
	j := 0
	if layerNormRowVec != nil && len(x) >= 8 {
		j = len(x) &^ 7
		layerNormRowVec(&x[0], &G[0], &B[0], &xh[0], &y[0], j, mean, rstd)
	}
	for ; j < len(x); j++ {
		h := float32((float64(x[j]) - mean) * rstd)
		xh[j] = h
		y[j] = h*G[j] + B[j]
	}
}

// The vector loops, where the CPU has AVX2 (normvec_amd64.s), on the first
// n elements, n a positive multiple of 8: each lane does the scalar
// loop's operations in its order, with the same operand first (which NaN
// an operation keeps), and no fused multiply-add.
var (
	layerNormRowVec  func(x, g, b, xh, y *float32, n int, mean, rstd float64)
	layerNormGradVec func(gy, g, xh, d *float32, n int, m1, m2, rs float32)
	rmsNormRowVec    func(x, g, xh, y *float32, n int, rstd float64)
	rmsNormGradVec   func(gy, g, xh, d *float32, n int, m, rs float32)
)

type l2NormFn struct {
	x    mat.Tensor
	y    []float32
	norm []float32
	eps  float32

	dt        devTemps
	dy, dnorm backend.Buffer // the output and the norms on the device
}

// L2Normalize divides each row by its Euclidean norm (floored at 1e-12,
// as torch.nn.functional.normalize).
func L2Normalize(x mat.Tensor) mat.Tensor { return run(&l2NormFn{x: x, eps: 1e-12}) }

func (f *l2NormFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *l2NormFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("L2Normalize", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	out := zeroMatrix(r, c)
	X, Y := Data(f.x), Data(out)
	f.norm = alloc(r)
	ParallelFor(r, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := X[i*c : (i+1)*c]
			var ss float64
			for _, v := range x {
				ss += float64(v) * float64(v)
			}
			n := max(float32(math.Sqrt(ss)), f.eps)
			f.norm[i] = n
			for j, v := range x {
				Y[i*c+j] = v / n
			}
		}
	})
	f.y = Y
	return wrap(out, f), nil
}

func (f *l2NormFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	G := Data(gy)
	gx := alloc(r * c)
	ParallelFor(r, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			y, g, d := f.y[i*c:(i+1)*c], G[i*c:(i+1)*c], gx[i*c:(i+1)*c]
			n := f.norm[i]
			if n <= f.eps { // the floor is active: y = x / eps, linear
				for j := range d {
					d[j] = g[j] / n
				}
				continue
			}
			var dot float32
			for j := range g {
				dot += g[j] * y[j]
			}
			for j := range d {
				d[j] = (g[j] - y[j]*dot) / n
			}
		}
	})
	accGrad(f.x, gx)
	return nil
}

type rmsNormFn struct {
	x, g mat.Tensor
	eps  float32
	xhat []float32
	rstd []float32

	dt           devTemps
	dxhat, drstd backend.Buffer
}

// RMSNorm scales each row of x by the reciprocal of its root mean square
// (no mean subtracted, eps inside the square root, sum of squares in
// float64) and applies the per-column gain g: T5's layer norm, which has no
// bias.
func RMSNorm(x, g mat.Tensor, eps float32) mat.Tensor {
	_, c := Dims(x)
	if g.Size() != c {
		panic(fmt.Sprintf("tensor.RMSNorm: width %d but gain has %d values", c, g.Size()))
	}
	return run(&rmsNormFn{x: x, g: g, eps: eps})
}

func (f *rmsNormFn) Operands() []mat.Tensor { return []mat.Tensor{f.x, f.g} }

func (f *rmsNormFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("RMSNorm", f.x, f.g); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	if k, ok := kernels(); ok {
		out := zeroMatrix(r, c)
		f.xhat, f.rstd = alloc(r*c), alloc(r)
		k.RMSNormForward(Data(f.x), Data(f.g), r, c, f.eps, Data(out), f.xhat, f.rstd)
		return wrap(out, f), nil
	}
	// Every element of out, xhat and rstd is written below.
	out := rawMatrix(r, c)
	X, Y, G := Data(f.x), Data(out), Data(f.g)
	f.xhat = allocRaw(r * c)
	f.rstd = allocRaw(r)
	ParallelFor(r, 8, func(lo, hi int) { rmsNormRows(X, G, c, f.eps, Y, f.xhat, f.rstd, lo, hi) })
	return wrap(out, f), nil
}

func (f *rmsNormFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	r, c := Dims(f.x)
	Gy, G := Data(gy), Data(f.g)
	if f.x.RequiresGrad() {
		var gx []float32
		if k, ok := kernels(); ok {
			gx = alloc(r * c)
			k.RMSNormBackward(Gy, G, f.xhat, f.rstd, r, c, gx)
		} else {
			gx = allocRaw(r * c) // every element written
			rmsNormGradX(Gy, G, f.xhat, f.rstd, r, c, gx)
		}
		accGrad(f.x, gx)
	}
	if f.g.RequiresGrad() {
		accGrad(f.g, gainGrad(Gy, f.xhat, r, c))
	}
	return nil
}

// rmsNormGradX is RMSNorm's input gradient on the CPU:
// rstd * (gy*g - xhat * mean(gy*g*xhat)).
func rmsNormGradX(Gy, G, xhat, rstd []float32, r, c int, gx []float32) {
	ParallelFor(r, 8, func(lo, hi int) {
		i := lo
		for ; rmsNormGradSums8Vec != nil && c >= 8 && i+8 <= hi; i += 8 {
			gyr, xh, n := Gy[i*c:(i+8)*c], xhat[i*c:(i+8)*c], c&^7
			var s [8]float32
			rmsNormGradSums8Vec(&gyr[0], &G[0], &xh[0], c, n, &s)
			for q := 0; q < 8; q++ {
				g, h := gyr[q*c:(q+1)*c], xh[q*c:(q+1)*c]
				for j := n; j < c; j++ { // the chain's last c%8 elements
					s[q] += g[j] * G[j] * h[j]
				}
				rmsNormGradRow(g, G, h, s[q]/float32(c), rstd[i+q], gx[(i+q)*c:(i+q+1)*c])
			}
		}
		for ; i+4 <= hi; i += 4 {
			var m [4]float32
			rmsNormGradSums4(Gy[i*c:(i+4)*c], G, xhat[i*c:(i+4)*c], c, &m)
			for q := 0; q < 4; q++ {
				k := (i + q) * c
				rmsNormGradRow(Gy[k:k+c], G, xhat[k:k+c], m[q], rstd[i+q], gx[k:k+c])
			}
		}
		for ; i < hi; i++ {
			gyr, xh := Gy[i*c:(i+1)*c], xhat[i*c:(i+1)*c]
			var s float32
			for j, g := range gyr {
				s += g * G[j] * xh[j]
			}
			rmsNormGradRow(gyr, G, xh, s/float32(c), rstd[i], gx[i*c:(i+1)*c])
		}
	})
}

// rmsNormGradSums4 sets m[q] to the mean of gy*g*xhat over row q of the
// four c wide rows, each sum in element order from +0 as in
// rmsNormGradX's single-row loop, the four chains in one loop.
func rmsNormGradSums4(gy, G, xhat []float32, c int, m *[4]float32) {
	g0, g1, g2, g3 := gy[:c], gy[c:2*c], gy[2*c:3*c], gy[3*c:4*c]
	h0, h1, h2, h3 := xhat[:c], xhat[c:2*c], xhat[2*c:3*c], xhat[3*c:4*c]
	G = G[:c]
	var s0, s1, s2, s3 float32
	for j, gj := range G {
		s0 += g0[j] * gj * h0[j]
		s1 += g1[j] * gj * h1[j]
		s2 += g2[j] * gj * h2[j]
		s3 += g3[j] * gj * h3[j]
	}
	fc := float32(c)
	*m = [4]float32{s0 / fc, s1 / fc, s2 / fc, s3 / fc}
}

// rmsNormGradRow sets d[j] = rs * (gy[j]*G[j] - xh[j]*m), the first
// multiple of 8 elements by rmsNormGradVec where the CPU has AVX2.
func rmsNormGradRow(gy, G, xh []float32, m, rs float32, d []float32) {
	j := 0
	if rmsNormGradVec != nil && len(d) >= 8 {
		j = len(d) &^ 7
		rmsNormGradVec(&gy[0], &G[0], &xh[0], &d[0], j, m, rs)
	}
	for ; j < len(d); j++ {
		d[j] = rs * (gy[j]*G[j] - xh[j]*m)
	}
}

// rmsNormRows is RMSNorm's CPU forward over rows [lo, hi) of the c wide
// X: per row, rstd from a float64 sum of squares in element order, then
// xhat and y; eight or four rows' chains together, as layerNormRows.
func rmsNormRows(X, G []float32, c int, eps float32, Y, xhat, rstd []float32, lo, hi int) {
	fc, e := float64(c), float64(eps)
	i := lo
	for ; rowSqDev8Vec != nil && c >= 4 && i+8 <= hi; i += 8 {
		x, n := X[i*c:(i+8)*c], c&^3
		var zero, s [8]float64
		rowSqDev8Vec(&x[0], c, n, &zero, &s)
		for q := 0; q < 8; q++ {
			for _, v := range x[q*c+n : (q+1)*c] {
				s[q] += float64(v) * float64(v)
			}
			rs := 1 / math.Sqrt(s[q]/fc+e)
			k := (i + q) * c
			rstd[i+q] = float32(rs)
			rmsNormRow(X[k:k+c], G, rs, xhat[k:k+c], Y[k:k+c])
		}
	}
	for ; i+4 <= hi; i += 4 {
		x0, x1, x2, x3 := X[i*c:(i+1)*c], X[(i+1)*c:(i+2)*c], X[(i+2)*c:(i+3)*c], X[(i+3)*c:(i+4)*c]
		x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
		var s0, s1, s2, s3 float64
		for j, v := range x0 {
			s0 += float64(v) * float64(v)
			s1 += float64(x1[j]) * float64(x1[j])
			s2 += float64(x2[j]) * float64(x2[j])
			s3 += float64(x3[j]) * float64(x3[j])
		}
		rs := [4]float64{1 / math.Sqrt(s0/fc+e), 1 / math.Sqrt(s1/fc+e), 1 / math.Sqrt(s2/fc+e), 1 / math.Sqrt(s3/fc+e)}
		for q := 0; q < 4; q++ {
			k := (i + q) * c
			rstd[i+q] = float32(rs[q])
			rmsNormRow(X[k:k+c], G, rs[q], xhat[k:k+c], Y[k:k+c])
		}
	}
	for ; i < hi; i++ {
		x := X[i*c : (i+1)*c]
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		rs := 1 / math.Sqrt(ss/float64(c)+float64(eps))
		rstd[i] = float32(rs)
		rmsNormRow(x, G, rs, xhat[i*c:(i+1)*c], Y[i*c:(i+1)*c])
	}
}

// rmsNormRow sets xh[j] = float32(x[j] * rstd) in float64 and y[j] =
// xh[j]*G[j], the first multiple of 8 elements by rmsNormRowVec where the
// CPU has AVX2.
func rmsNormRow(x, G []float32, rstd float64, xh, y []float32) {
	j := 0
	if rmsNormRowVec != nil && len(x) >= 8 {
		j = len(x) &^ 7
		rmsNormRowVec(&x[0], &G[0], &xh[0], &y[0], j, rstd)
	}
	for ; j < len(x); j++ {
		h := float32(float64(x[j]) * rstd)
		xh[j] = h
		y[j] = h * G[j]
	}
}
