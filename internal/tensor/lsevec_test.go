package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// expSumRef is expSum's scalar loop.
func expSumRef(x []float32, mx float32) float64 {
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v - mx))
	}
	return sum
}

// logSoftmaxRowRef is logSoftmaxRow in scalar Go, as it was before the
// vector paths: its lse = mx + log was ADDSS with mx first, which with two
// NaNs gives mx, quieted (said explicitly: a Go sum's operand order varies).
func logSoftmaxRowRef(x, y []float32) {
	mx := maxFold(x)
	lse := mx + float32(math.Log(expSumRef(x, mx)))
	if mx != mx {
		lse = math.Float32frombits(math.Float32bits(mx) | 1<<22)
	}
	for j, v := range x {
		y[j] = v - lse
	}
}

// TestExpSumLanes: each exponential expSum adds has math.Exp's bits, for a
// dense sweep of float32 arguments (every 1021st bit pattern of both signs,
// around the range limits 700, -700, -750 and math.Exp's own cut-offs) and
// several mx, the value in each lane of a group whose other lanes are
// -Inf (adding math.Exp(-Inf) = +0 to a non-negative sum is exact, so the
// sum is the one exponential).
func TestExpSumLanes(t *testing.T) {
	var xs []float32
	for b := uint32(0); b < 0x7f800000; b += 1021 {
		xs = append(xs, math.Float32frombits(b), math.Float32frombits(b|0x80000000))
	}
	for _, e := range []float32{700, -700, -750, 709.78271, -745.1332, -708.39642, 0, 1, -1, 0.34657359, -0.34657359} {
		for d := -300; d <= 300; d++ {
			b := int64(math.Float32bits(e)) + int64(d)
			if e == 0 && d < 0 {
				b = int64(math.Float32bits(float32(math.Copysign(0, -1)))) - int64(d)
			}
			xs = append(xs, math.Float32frombits(uint32(b)))
		}
	}
	inf := float32(math.Inf(-1))
	vector := 0
	for _, mx := range []float32{0, 1.5, -3.25, 0.1} {
		for i, v := range xs {
			g := []float32{inf, inf, inf, inf, inf}
			g[i%4] = v
			got, want := expSum(g, mx), math.Exp(float64(v-mx))
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("mx=%v v=%v (%#08x): expSum lane %v (%#016x), math.Exp %v (%#016x)", mx, v, math.Float32bits(v),
					got, math.Float64bits(got), want, math.Float64bits(want))
			}
			if x := float64(v - mx); x >= -700 && x <= 700 {
				vector++
			}
		}
	}
	if expSumVec == nil {
		t.Log("no AVX2/FMA: the scalar loop ran")
	} else if vector < 100000 {
		t.Fatalf("only %d arguments in the vector lanes' range", vector)
	}
}

// rowOf returns n values of one of several kinds: ordinary logits, wide
// spreads that put lanes past the vector range (scalar groups) and below
// -750 (zero lanes), -Inf masks, NaNs, +Inf, huge negatives, tiny values
// and signed zeros.
func rowOf(rng *rand.Rand, n, kind int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch kind {
		case 0:
			x[i] = float32(3 * rng.NormFloat64())
		case 1:
			x[i] = float32(400 * rng.NormFloat64())
		case 2:
			x[i] = float32(-760 * rng.Float64())
		default:
			switch rng.IntN(12) {
			case 0:
				x[i] = float32(math.Inf(-1))
			case 1:
				x[i] = -1e30
			case 2:
				if kind == 4 {
					x[i] = float32(math.NaN())
				} else {
					x[i] = float32(math.Copysign(0, -1))
				}
			case 3:
				if kind == 5 {
					x[i] = float32(math.Inf(1))
				} else {
					x[i] = 1e-40
				}
			default:
				x[i] = float32(2 * rng.NormFloat64())
			}
		}
	}
	return x
}

// TestExpSumRows: expSum, logSumExp and logSoftmaxRow give the scalar
// loops' bits over many rows of lengths 1..40 and GPT-2's 50257, of every
// kind rowOf makes, with mx the row's max and other values.
func TestExpSumRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	var lens []int
	for n := 1; n <= 40; n++ {
		lens = append(lens, n)
	}
	lens = append(lens, 50257)
	for _, n := range lens {
		trials := 60
		if n > 1000 {
			trials = 2
		}
		for trial := 0; trial < trials; trial++ {
			for kind := 0; kind < 6; kind++ {
				x := rowOf(rng, n, kind)
				for _, mx := range []float32{maxFold(x), 0, -500, 1.5} {
					got, want := expSum(x, mx), expSumRef(x, mx)
					if math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("n=%d kind=%d mx=%v: expSum %v (%#016x), scalar %v (%#016x)", n, kind, mx,
							got, math.Float64bits(got), want, math.Float64bits(want))
					}
				}
				y, ref := make([]float32, n), make([]float32, n)
				logSoftmaxRow(x, y)
				logSoftmaxRowRef(x, ref)
				for j := range y {
					if math.Float32bits(y[j]) != math.Float32bits(ref[j]) {
						t.Fatalf("n=%d kind=%d: logSoftmaxRow[%d] %v (%#08x), scalar %v (%#08x); x %v", n, kind, j, y[j], math.Float32bits(y[j]), ref[j], math.Float32bits(ref[j]), x)
					}
				}
				// Softmax's and cross-entropy's one pass against the
				// log-softmax row followed by expSub(y, 0).
				lse := logSumExp(x)
				expSubTo(y, x, lse)
				expSub(ref, 0)
				for j := range y {
					if math.Float32bits(y[j]) != math.Float32bits(ref[j]) {
						t.Fatalf("n=%d kind=%d: expf(x - lse)[%d] %v, expf(log-softmax) %v", n, kind, j, y[j], ref[j])
					}
				}
			}
		}
	}
}

// TestSubMulScalar: subScalar and mulScalar give the scalar loops' bits,
// NaN payloads included (a NaN factor runs the scalar loop).
func TestSubMulScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	nan1, nan2 := math.Float32frombits(0x7fc00123), math.Float32frombits(0xffc00456)
	for n := 1; n <= 70; n++ {
		for kind := 0; kind < 6; kind++ {
			x := rowOf(rng, n, kind)
			if kind == 4 {
				x[rng.IntN(n)] = nan1
			}
			for _, s := range []float32{0.75, -3, nan2, float32(math.Inf(1)), 0, 1e-40} {
				got := make([]float32, n)
				subScalar(got, x, s)
				for j, v := range x {
					if want := v - s; math.Float32bits(got[j]) != math.Float32bits(want) {
						t.Fatalf("n=%d s=%v: %v - s = %v (%#08x), scalar %v (%#08x)", n, s, v, got[j], math.Float32bits(got[j]), want, math.Float32bits(want))
					}
				}
				mulScalar(got, x, s)
				for j, v := range x {
					want := s * v
					if v != v { // MULSS with v first, as the loop before the vector path
						want = math.Float32frombits(math.Float32bits(v) | 1<<22)
					}
					if math.Float32bits(got[j]) != math.Float32bits(want) {
						t.Fatalf("n=%d s=%v: s * %v = %v (%#08x), scalar %v (%#08x)", n, s, v, got[j], math.Float32bits(got[j]), want, math.Float32bits(want))
					}
				}
			}
		}
	}
}
