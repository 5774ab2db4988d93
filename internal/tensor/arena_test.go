package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestUnzeroedBuffersFullyWritten runs the operators that take their
// outputs, scratch and gradients from the free lists without zeroing them
// (ReLU, dropout, elementwise arithmetic, unary functions, RMS norm,
// cross-entropy with ignored rows) once as they are and once with every
// such buffer filled with NaNs when handed out (poisonRaw): the values and
// gradients must be the same bits, so no element is left unwritten.
func TestUnzeroedBuffersFullyWritten(t *testing.T) {
	const r, c = 8, 24 // 192 values: a pooled size class
	run := func(poison bool) []float32 {
		poisonRaw = poison
		defer func() { poisonRaw = false }()
		rng := rand.New(rand.NewPCG(1, 2))
		x, y := param(rng, r, c, 1), param(rng, r, c, 1)
		g := param(rng, 1, c, 1)
		drop := rand.New(rand.NewPCG(3, 4))
		h := ReLU(Mul(Sub(x, y), Add(x, y)))
		h = Dropout(Tanh(RMSNorm(h, g, 1e-6)), 0.5, drop)
		targets := make([]int, r)
		for i := range targets {
			targets[i] = i % c
		}
		targets[2], targets[5] = IgnoreIndex, IgnoreIndex
		loss := CrossEntropy(h, targets)
		if err := Backward(loss); err != nil {
			t.Fatal(err)
		}
		out := append([]float32(nil), Data(loss)...)
		out = append(out, Data(h)...)
		for _, p := range []*Matrix{x, y, g} {
			out = append(out, GradData(p)...)
		}
		Release(loss)
		return out
	}
	nan, zero := run(true), run(false)
	for i := range nan {
		if math.Float32bits(nan[i]) != math.Float32bits(zero[i]) {
			t.Fatalf("value %d: %v with poisoned buffers, %v without", i, nan[i], zero[i])
		}
	}
}

// TestDropoutMaskParallelDraws checks that masks long enough to be drawn by
// several goroutines (jump-ahead PCGs) hold the sequential draws, odd
// lengths included, and leave the generator where the sequential loop
// leaves it.
func TestDropoutMaskParallelDraws(t *testing.T) {
	for _, n := range []int{7, 2*parallelDraws - 1, 2 * parallelDraws, 5*parallelDraws + 3} {
		const p = 0.1
		rng := rand.New(rand.NewPCG(9, uint64(n)))
		ref := rand.New(rand.NewPCG(9, uint64(n)))
		got := dropoutMask(rng, n, p)
		keep := 1 / (1 - float32(p))
		thr := uint32(float64(float32(p)) * (1 << 32))
		for i := 0; i < n; i += 2 {
			u := ref.Uint64()
			for j, w := range []uint32{uint32(u), uint32(u >> 32)} {
				if i+j >= n {
					break
				}
				want := float32(0)
				if w >= thr {
					want = keep
				}
				if got[i+j] != want {
					t.Fatalf("n=%d: element %d = %v, want %v", n, i+j, got[i+j], want)
				}
			}
		}
		if a, b := rng.Uint64(), ref.Uint64(); a != b {
			t.Fatalf("n=%d: next draw %x after the mask, want %x", n, a, b)
		}
	}
}

// TestBranchlessMasks: positiveMask(v) is all ones exactly when v > 0 (a
// sweep of bit patterns of both signs, the specials and their neighbours),
// and atLeast(u, thr) exactly when u >= thr.
func TestBranchlessMasks(t *testing.T) {
	var bs []uint32
	for b := uint64(0); b <= math.MaxUint32; b += 65521 {
		bs = append(bs, uint32(b))
	}
	for _, e := range []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 1, 0x80000001, 0x3f800000, 0xffffffff, 0x7fffffff} {
		bs = append(bs, e, e+1, e-1)
	}
	for _, b := range bs {
		v := math.Float32frombits(b)
		want := uint32(0)
		if v > 0 {
			want = ^uint32(0)
		}
		if got := positiveMask(v); got != want {
			t.Fatalf("positiveMask(%v, %#08x) = %#x, want %#x", v, b, got, want)
		}
	}
	for _, thr := range []uint32{0, 1, 429496729, 0x80000000, math.MaxUint32} {
		for _, u := range bs {
			want := uint32(0)
			if u >= thr {
				want = ^uint32(0)
			}
			if got := atLeast(u, thr); got != want {
				t.Fatalf("atLeast(%#x, %#x) = %#x, want %#x", u, thr, got, want)
			}
		}
	}
}

// TestMaxOfFold: maxOf gives the in-order fold's bits, signed zeros, NaNs
// (payloads included, signalling ones too) and infinities among the
// values, every length up to 40, longer rows (the vector path's 32-wide
// loop, 8-wide loop and tail) and GPT-2's 50257; rows whose max is a zero
// of either sign, and rows with one NaN, in the vector part or the tail.
func TestMaxOfFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00002), -1, 1, math.Float32frombits(0x7f800003)}
	for trial := 0; trial < 40000; trial++ {
		n := 1 + rng.IntN(40)
		switch {
		case trial%10 == 9:
			n = 41 + rng.IntN(300)
		case trial%1000 == 999:
			n = 50257
		}
		x := make([]float32, n)
		for i := range x {
			switch rng.IntN(4) {
			case 0:
				x[i] = specials[rng.IntN(len(specials))]
			case 1:
				x[i] = specials[rng.IntN(2)] // zeros of both signs
			default:
				x[i] = float32(rng.NormFloat64())
			}
		}
		switch trial % 4 {
		case 0, 1: // no NaN in half the trials
			for i, v := range x {
				if v != v {
					x[i] = -2
				}
			}
		case 2: // no NaN and nothing positive: the max is a zero (or negative)
			for i, v := range x {
				if v != v || v > 0 {
					x[i] = -v
					if v != v {
						x[i] = -3
					}
				}
			}
		}
		if trial%8 == 1 { // then one NaN
			x[rng.IntN(n)] = specials[4+rng.IntN(2)]
		}
		if got, want := maxOf(x), maxFold(x); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("maxOf(%v) = %v (%#08x), fold %v (%#08x)", x, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	if maxVec == nil {
		t.Log("no AVX2: the Go loops ran")
	}
}
