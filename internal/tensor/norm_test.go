package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"repro/internal/tensor/tensortest"
)

// The normalisations' CPU loops as norm.go had them before the vector
// loops and the four-row chains: the references those must match bit for
// bit.

func refLayerNormScalar(X, G, B []float32, r, c int, eps float32) (Y, xhat, rstd []float32) {
	Y, xhat, rstd = make([]float32, r*c), make([]float32, r*c), make([]float32, r)
	for i := 0; i < r; i++ {
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
		xh, y := xhat[i*c:(i+1)*c], Y[i*c:(i+1)*c]
		for j, v := range x {
			h := float32((float64(v) - mean) * rs)
			xh[j] = h
			y[j] = h*G[j] + B[j]
		}
	}
	return Y, xhat, rstd
}

func refLayerNormGradXScalar(Gy, G, xhat, rstd []float32, r, c int) []float32 {
	gx := make([]float32, r*c)
	for i := 0; i < r; i++ {
		gyr, xh, d := Gy[i*c:(i+1)*c], xhat[i*c:(i+1)*c], gx[i*c:(i+1)*c]
		var s1, s2 float32
		for j, g := range gyr {
			dh := g * G[j]
			s1 += dh
			s2 += dh * xh[j]
		}
		m1, m2 := s1/float32(c), s2/float32(c)
		rs := rstd[i]
		for j, g := range gyr {
			d[j] = rs * (g*G[j] - m1 - xh[j]*m2)
		}
	}
	return gx
}

// refGainGrad is gainGrad as it was: the products stored, then colSums
// (whose vector path is the one it had).
func refGainGrad(gy, xhat []float32, r, c int) []float32 {
	prod := make([]float32, r*c)
	for i := range prod {
		prod[i] = gy[i] * xhat[i]
	}
	return colSums(prod, r, c)
}

func refRMSNormScalar(X, G []float32, r, c int, eps float32) (Y, xhat, rstd []float32) {
	Y, xhat, rstd = make([]float32, r*c), make([]float32, r*c), make([]float32, r)
	for i := 0; i < r; i++ {
		x := X[i*c : (i+1)*c]
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		rs := 1 / math.Sqrt(ss/float64(c)+float64(eps))
		rstd[i] = float32(rs)
		xh, y := xhat[i*c:(i+1)*c], Y[i*c:(i+1)*c]
		for j, v := range x {
			h := float32(float64(v) * rs)
			xh[j] = h
			y[j] = h * G[j]
		}
	}
	return Y, xhat, rstd
}

func refRMSNormGradXScalar(Gy, G, xhat, rstd []float32, r, c int) []float32 {
	gx := make([]float32, r*c)
	for i := 0; i < r; i++ {
		gyr, xh, d := Gy[i*c:(i+1)*c], xhat[i*c:(i+1)*c], gx[i*c:(i+1)*c]
		var s float32
		for j, g := range gyr {
			s += g * G[j] * xh[j]
		}
		m := s / float32(c)
		rs := rstd[i]
		for j, g := range gyr {
			d[j] = rs * (g*G[j] - xh[j]*m)
		}
	}
	return gx
}

// normTestNaN returns a NaN with a random sign and payload, so that an
// operation that keeps the other operand's NaN shows.
func normTestNaN(r *rand.Rand) float32 {
	return math.Float32frombits(0x7fc00000 | r.Uint32()&0x803fffff)
}

// normTestMatrix returns rows x cols values: each row normals at a scale
// of its own, 2^lo to 2^hi (-140 to 120: subnormal squares, overflowing
// squares and sums), shifted for cancellation in the mean, constant, zero, or with
// special values (signed zeros, subnormals, +-MaxFloat32, +-Inf, NaNs of
// random payloads) at random places, the kind of row chosen at random.
func normTestMatrix(r *rand.Rand, rows, cols, lo, hi int) []float32 {
	sp := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 1e-40, -3e-39, math.MaxFloat32, -math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1))}
	x := make([]float32, rows*cols)
	for i := 0; i < rows; i++ {
		row := x[i*cols : (i+1)*cols]
		scale := math.Ldexp(1, lo+r.IntN(hi-lo+1))
		shift := 0.0
		if r.IntN(4) == 0 {
			shift = scale * float64(r.IntN(2000)-1000)
		}
		for j := range row {
			row[j] = float32(r.NormFloat64()*scale + shift)
		}
		switch r.IntN(10) {
		case 0:
			v := float32(r.NormFloat64())
			for j := range row {
				row[j] = v
			}
		case 1:
			clear(row)
		case 2, 3:
			for k := 0; k < 1+r.IntN(3); k++ {
				j := r.IntN(cols)
				if r.IntN(3) == 0 {
					row[j] = normTestNaN(r)
				} else {
					row[j] = sp[r.IntN(len(sp))]
				}
			}
		}
	}
	return x
}

// normTestVector returns n values for a gain or a bias: normals with a
// special value at about one place in twelve if special, else normals with
// zeros and subnormals.
func normTestVector(r *rand.Rand, n int, special bool) []float32 {
	sp := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-40, 3e38, float32(math.Inf(1)), float32(math.Inf(-1))}
	v := tensortest.Normals(r, n, 1)
	for i := range v {
		switch k := r.IntN(24); {
		case k < 2 && !special:
			v[i] = sp[r.IntN(4)]
		case k == 0:
			v[i] = sp[r.IntN(len(sp))]
		case k == 1:
			v[i] = normTestNaN(r)
		}
	}
	return v
}

// poisoned returns n copies of a finite value (6.25e18, 0x5eadbeef) that
// no test row gives, so that an element left unwritten fails a bits check.
func poisoned(n int) []float32 {
	p := make([]float32, n)
	for i := range p {
		p[i] = math.Float32frombits(0x5eadbeef)
	}
	return p
}

// sameBits fails t unless got and want agree bit for bit, any NaN matching
// any NaN (tensortest.SameBits): which operand's NaN an x86 operation keeps
// when both are NaN depends on the order the compiler gave the scalar
// loop's operands, which changes with the code around it (the four-row
// chains' compiled order differs from the single row's).
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if !tensortest.SameBits(got[i], want[i]) {
			t.Fatalf("%s: [%d] = %v (%#08x), scalar %v (%#08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestNormBits: LayerNorm's and RMSNorm's CPU forward (y, xhat, rstd),
// input gradient and gain gradient give the scalar loops' bits (NaN for
// NaN, see sameBits), with the vector loops (where the CPU has AVX2) and
// without (the portable four-row chains alone), on widths around the
// vector width, row counts around the four- and eight-row groups and the parallel
// split, and rows of every kind normTestMatrix makes. The backward runs
// on the forward's xhat and rstd and again on arbitrary ones (xhat and
// rstd with special values of their own).
func TestNormBits(t *testing.T) {
	lnRow, lnGrad, rmsRow, rmsGrad, cps, gb := layerNormRowVec, layerNormGradVec, rmsNormRowVec, rmsNormGradVec, colProdSumsVec, gainBiasVec
	rs8, sq8, lg8, rg8 := rowSums8Vec, rowSqDev8Vec, layerNormGradSums8Vec, rmsNormGradSums8Vec
	defer func() {
		layerNormRowVec, layerNormGradVec, rmsNormRowVec, rmsNormGradVec, colProdSumsVec, gainBiasVec = lnRow, lnGrad, rmsRow, rmsGrad, cps, gb
		rowSums8Vec, rowSqDev8Vec, layerNormGradSums8Vec, rmsNormGradSums8Vec = rs8, sq8, lg8, rg8
	}()
	if lnRow == nil {
		t.Log("no AVX2: the portable loops alone")
	}
	for _, vec := range []bool{true, false} {
		if !vec {
			layerNormRowVec, layerNormGradVec, rmsNormRowVec, rmsNormGradVec, colProdSumsVec, gainBiasVec = nil, nil, nil, nil, nil, nil
			rowSums8Vec, rowSqDev8Vec, layerNormGradSums8Vec, rmsNormGradSums8Vec = nil, nil, nil, nil
		}
		r := rand.New(rand.NewPCG(38, 1))
		for _, rows := range []int{1, 3, 4, 5, 8, 9, 12, 13, 16, 19, 37} {
			for _, cols := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 256, 263} {
				x, gy := normTestMatrix(r, rows, cols, -140, 120), normTestMatrix(r, rows, cols, -20, 20)
				for k, eps := range []float32{1e-12, 1e-5} {
					name := fmt.Sprintf("vec %v, %dx%d, eps %g", vec, rows, cols, eps)
					g, b := normTestVector(r, cols, k == 1), normTestVector(r, cols, k == 1)
					n := rows * cols
					// LayerNorm.
					wantY, wantXh, wantRs := refLayerNormScalar(x, g, b, rows, cols, eps)
					y, xh, rs := poisoned(n), poisoned(n), poisoned(rows)
					ParallelFor(rows, 8, func(lo, hi int) { layerNormRows(x, g, b, cols, eps, y, xh, rs, lo, hi) })
					sameBits(t, name+": LayerNorm y", y, wantY)
					sameBits(t, name+": LayerNorm xhat", xh, wantXh)
					sameBits(t, name+": LayerNorm rstd", rs, wantRs)
					// The backward on the forward's xhat and rstd, then on
					// arbitrary ones.
					for k, in := range [][2][]float32{{wantXh, wantRs}, {normTestMatrix(r, rows, cols, -20, 20), normTestVector(r, rows, true)}} {
						what := fmt.Sprintf("%s, backward %d", name, k)
						gx := poisoned(n)
						layerNormGradX(gy, g, in[0], in[1], rows, cols, gx)
						sameBits(t, what+": LayerNorm grad x", gx, refLayerNormGradXScalar(gy, g, in[0], in[1], rows, cols))
						sameBits(t, what+": gain grad", gainGrad(gy, in[0], rows, cols), refGainGrad(gy, in[0], rows, cols))
						dg, db := gainBiasGrad(gy, in[0], rows, cols)
						sameBits(t, what+": fused gain grad", dg, refGainGrad(gy, in[0], rows, cols))
						sameBits(t, what+": fused bias grad", db, colSums(gy, rows, cols))
						gx = poisoned(n)
						rmsNormGradX(gy, g, in[0], in[1], rows, cols, gx)
						sameBits(t, what+": RMSNorm grad x", gx, refRMSNormGradXScalar(gy, g, in[0], in[1], rows, cols))
					}
					// RMSNorm.
					wantY, wantXh, wantRs = refRMSNormScalar(x, g, rows, cols, eps)
					y, xh, rs = poisoned(n), poisoned(n), poisoned(rows)
					ParallelFor(rows, 8, func(lo, hi int) { rmsNormRows(x, g, cols, eps, y, xh, rs, lo, hi) })
					sameBits(t, name+": RMSNorm y", y, wantY)
					sameBits(t, name+": RMSNorm xhat", xh, wantXh)
					sameBits(t, name+": RMSNorm rstd", rs, wantRs)
				}
			}
		}
	}
}

// TestRowChains8Bits: rowSums8Vec and rowSqDev8Vec (where the CPU has
// AVX2) give the float64 sums of the scalar chains bit for bit on rows
// whose elements span 2^-70 to 2^70, so that the sums round and any
// change in the order of a row's additions shows (the float64 sum of
// float32s of one scale is mostly exact, and LayerNorm's outputs round
// it to float32).
func TestRowChains8Bits(t *testing.T) {
	if rowSums8Vec == nil {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(38, 8))
	for k := 0; k < 20*7; k++ {
		n := []int{4, 8, 12, 16, 100, 256, 512}[k%7]
		ld := n + r.IntN(3)
		x := make([]float32, 8*ld)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(141)-70))
		}
		var mean [8]float64
		for q := range mean {
			mean[q] = r.NormFloat64() * math.Ldexp(1, r.IntN(141)-70)
		}
		var sums, sq, wantS, wantQ [8]float64
		rowSums8Vec(&x[0], ld, n, &sums)
		rowSqDev8Vec(&x[0], ld, n, &mean, &sq)
		for q := range wantS {
			for _, v := range x[q*ld : q*ld+n] {
				wantS[q] += float64(v)
				d := float64(v) - mean[q]
				wantQ[q] += d * d
			}
			if math.Float64bits(sums[q]) != math.Float64bits(wantS[q]) || math.Float64bits(sq[q]) != math.Float64bits(wantQ[q]) {
				t.Fatalf("n %d, row %d: sums %v, %v; scalar %v, %v", n, q, sums[q], sq[q], wantS[q], wantQ[q])
			}
		}
	}
}

// BenchmarkNorm: LayerNorm's forward and backward (x, gain and bias
// gradients) on 4096 x 256, the reference step's shape, and RMSNorm's on
// 2048 x 512 (T5-small's), through the operators on the CPU backend.
func BenchmarkNorm(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 3))
	for _, tc := range []struct {
		name       string
		rows, cols int
		rms        bool
	}{
		{"layernorm_4096x256", 4096, 256, false},
		{"rmsnorm_2048x512", 2048, 512, true},
	} {
		rows, cols := tc.rows, tc.cols
		x := gradLeaf(rows, cols, tensortest.Normals(r, rows*cols, 2))
		g := gradLeaf(cols, 1, tensortest.Normals(r, cols, 1))
		bias := gradLeaf(cols, 1, tensortest.Normals(r, cols, 1))
		gy := New(rows, cols, tensortest.Normals(r, rows*cols, 1))
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				var out []float32
				var xhat, rstd []float32
				if tc.rms {
					f := &rmsNormFn{x: x, g: g, eps: 1e-6}
					y, _ := f.Forward()
					if err := f.Backward(gy); err != nil {
						b.Fatal(err)
					}
					out, xhat, rstd = Data(y), f.xhat, f.rstd
				} else {
					f := &layerNormFn{x: x, g: g, b: bias, eps: 1e-12}
					y, _ := f.Forward()
					if err := f.Backward(gy); err != nil {
						b.Fatal(err)
					}
					out, xhat, rstd = Data(y), f.xhat, f.rstd
				}
				free(out)
				free(xhat)
				free(rstd)
				ReleaseGrad(x)
				ReleaseGrad(g)
				ReleaseGrad(bias)
			}
		})
	}
}
