//go:build cuda && gpu

package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"repro/internal/model/conformance"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/emudev"
)

// deviceCase runs one device kernel on dev over inputs made from r and
// returns its outputs, downloaded.
type deviceCase struct {
	name string
	run  func(dev backend.Device, r *rand.Rand) [][]float32
	ints bool // some outputs hold int32: compare every output exactly
}

func up(dev backend.Device, x []float32) backend.Buffer {
	b := dev.Alloc(max(len(x), 1))
	dev.Upload(b, 0, x, "test")
	return b
}

func upInts(dev backend.Device, x []int32) backend.Buffer {
	b := dev.Alloc(max(len(x), 1))
	dev.UploadInts(b, 0, x, "test")
	return b
}

func down(dev backend.Device, bs ...backend.Buffer) [][]float32 {
	var out [][]float32
	for _, b := range bs {
		h := make([]float32, b.Len())
		dev.Download(h, b, 0, "test")
		out = append(out, h)
		dev.Free(b)
	}
	return out
}

func deviceCases() []deviceCase {
	const rows, cols = 37, 29
	n := rows * cols
	idx := func(r *rand.Rand, npos, table int) []int32 {
		x := make([]int32, npos)
		for i := range x {
			x[i] = int32(r.IntN(table))
		}
		return x
	}
	return []deviceCase{
		{"Add", func(d backend.Device, r *rand.Rand) [][]float32 {
			a, b, y := up(d, randFloats(r, n)), up(d, randFloats(r, n)), d.Alloc(n)
			d.Add(a, b, y)
			return down(d, y, a, b)
		}, false},
		{"Mul", func(d backend.Device, r *rand.Rand) [][]float32 {
			a, b, y := up(d, randFloats(r, n)), up(d, randFloats(r, n)), d.Alloc(n)
			d.Mul(a, b, y)
			return down(d, y, a, b)
		}, false},
		{"GatherRows+ScatterAddRows", func(d backend.Device, r *rand.Rand) [][]float32 {
			x, ix := up(d, randFloats(r, n)), upInts(d, idx(r, 50, rows))
			y := d.Alloc(50 * cols)
			d.GatherRows(x, cols, ix, y)
			gx := up(d, randFloats(r, n))
			d.ScatterAddRows(y, cols, ix, gx)
			return down(d, y, gx, x, ix)
		}, true},
		{"BroadcastRows+ColSums", func(d backend.Device, r *rand.Rand) [][]float32 {
			b, y := up(d, randFloats(r, cols)), d.Alloc(n)
			d.BroadcastRows(b, y)
			x, s := up(d, randFloats(r, n)), d.Alloc(cols)
			d.ColSums(x, rows, cols, s)
			return down(d, y, s, b, x)
		}, false},
		{"DropoutMask", func(d backend.Device, r *rand.Rand) [][]float32 {
			m := d.Alloc(n)
			p := float32(0.1)
			d.DropoutMask(m, uint32(float64(p)*(1<<32)), 1/(1-p), r.Uint64(), r.Uint64())
			return down(d, m)
		}, false},
		{"AttentionVisible+MaskedSoftmaxRows+SoftmaxBackwardRows", func(d backend.Device, r *rand.Rand) [][]float32 {
			const B, H, Tq, Tk = 3, 4, 5, 7
			lens := upInts(d, []int32{7, 0, 3})
			vis := d.Alloc(B * H * Tq)
			d.AttentionVisible(lens, H, Tq, Tk, true, vis)
			x := up(d, randFloats(r, B*H*Tq*Tk))
			d.MaskedSoftmaxRows(x, B*H*Tq, Tk, vis)
			g := up(d, randFloats(r, B*H*Tq*Tk))
			d.SoftmaxBackwardRows(x, g, B*H*Tq, Tk, 0.125)
			return down(d, vis, x, g, lens)
		}, true},
		{"GELU", func(d backend.Device, r *rand.Rand) [][]float32 {
			x, y, c := up(d, randFloats(r, n)), d.Alloc(n), d.Alloc(n)
			d.GELUForward(x, y, c)
			gy, gx := up(d, randFloats(r, n)), d.Alloc(n)
			d.GELUBackward(x, c, gy, gx)
			return down(d, y, c, gx, x, gy)
		}, false},
		{"LayerNorm", func(d backend.Device, r *rand.Rand) [][]float32 {
			x, g, b := up(d, randFloats(r, n)), up(d, randFloats(r, cols)), up(d, randFloats(r, cols))
			y, xh, rs := d.Alloc(n), d.Alloc(n), d.Alloc(rows)
			d.LayerNormForward(x, g, b, rows, cols, 1e-12, y, xh, rs)
			gy, gx := up(d, randFloats(r, n)), d.Alloc(n)
			d.LayerNormBackward(gy, g, xh, rs, rows, cols, gx)
			return down(d, y, xh, rs, gx, x, g, b, gy)
		}, false},
		{"AdamW", func(d backend.Device, r *rand.Rand) [][]float32 {
			p, g, m, v := up(d, randFloats(r, n)), up(d, randFloats(r, n)), up(d, randFloats(r, n)), d.Alloc(n)
			d.AdamW(p, g, m, v, 0.99, 0.9, 0.999, 1e-3, 0.03, 1e-8)
			return down(d, p, m, v, g)
		}, false},
		{"MeanPool", func(d backend.Device, r *rand.Rand) [][]float32 {
			const B, T = 4, 6
			lens := upInts(d, []int32{6, 1, 0, 4})
			x, y := up(d, randFloats(r, B*T*cols)), d.Alloc(B*cols)
			d.MeanPool(x, T, cols, lens, y)
			g, gx := up(d, randFloats(r, B*cols)), d.Alloc(B*T*cols)
			d.MeanPoolBackward(g, T, cols, lens, gx)
			return down(d, y, gx, x, g, lens)
		}, false},
		{"MSE", func(d backend.Device, r *rand.Rand) [][]float32 {
			x, t, out := up(d, randFloats(r, n)), up(d, randFloats(r, n)), d.Alloc(1)
			d.MSEForward(x, t, out)
			gy, gx := up(d, []float32{0.7}), d.Alloc(n)
			d.MSEBackward(x, t, gy, gx)
			return down(d, out, gx, x, t, gy)
		}, false},
		// The second slice.
		{"Sub+Neg+Scale", func(d backend.Device, r *rand.Rand) [][]float32 {
			a, b, y, z, w := up(d, randFloats(r, n)), up(d, randFloats(r, n)), d.Alloc(n), d.Alloc(n), d.Alloc(n)
			d.Sub(a, b, y)
			d.Neg(y, z)
			d.Scale(z, 1/0.05, w)
			d.Scale(w, 0.5, w) // in place
			return down(d, y, z, w, a, b)
		}, false},
		{"Abs+Tanh", func(d backend.Device, r *rand.Rand) [][]float32 {
			x := randFloats(r, n)
			for i := range x {
				x[i] *= float32(1 + i%5) // tanh's exp branch
			}
			x[0] = 0
			X, y, gy := up(d, x), d.Alloc(n), up(d, randFloats(r, n))
			ga, t, gt := d.Alloc(n), d.Alloc(n), d.Alloc(n)
			d.AbsForward(X, y)
			d.AbsBackward(X, gy, ga)
			d.TanhForward(X, t)
			d.TanhBackward(t, gy, gt)
			return down(d, y, ga, t, gt, X, gy)
		}, false},
		{"GELUTanh+ReLU", func(d backend.Device, r *rand.Rand) [][]float32 {
			x, gy := up(d, randFloats(r, n)), up(d, randFloats(r, n))
			y, t, gx, ry, rg := d.Alloc(n), d.Alloc(n), d.Alloc(n), d.Alloc(n), d.Alloc(n)
			d.GELUTanhForward(x, y, t)
			d.GELUTanhBackward(x, t, gy, gx)
			d.ReLUForward(x, ry)
			d.ReLUBackward(x, gy, rg)
			return down(d, y, t, gx, ry, rg, x, gy)
		}, false},
		{"RMSNorm+L2Norm", func(d backend.Device, r *rand.Rand) [][]float32 {
			x, g, gy := up(d, randFloats(r, n)), up(d, randFloats(r, cols)), up(d, randFloats(r, n))
			y, xh, rs, gx := d.Alloc(n), d.Alloc(n), d.Alloc(rows), d.Alloc(n)
			d.RMSNormForward(x, g, rows, cols, 1e-6, y, xh, rs)
			d.RMSNormBackward(gy, g, xh, rs, rows, cols, gx)
			ly, nrm, lg := d.Alloc(n), d.Alloc(rows), d.Alloc(n)
			d.L2NormForward(x, rows, cols, 1e-12, ly, nrm)
			d.L2NormBackward(ly, nrm, gy, rows, cols, 1e-12, lg)
			return down(d, y, xh, rs, gx, ly, nrm, lg, x, g, gy)
		}, false},
		{"RowDot+RowScale+CopyBlock", func(d backend.Device, r *rand.Rand) [][]float32 {
			a, b, y, s := up(d, randFloats(r, n)), up(d, randFloats(r, n)), d.Alloc(rows), d.Alloc(n)
			d.RowDot(a, b, rows, cols, y)
			d.RowScale(y, a, cols, s)
			c := d.Alloc(rows * (cols + 3))
			d.CopyBlock(a, cols, 2, c, cols+3, 1, rows-1, cols-5)
			return down(d, y, s, c, a, b)
		}, false},
		{"Sum+FillFrom+SumSquares", func(d backend.Device, r *rand.Rand) [][]float32 {
			x, s, m, g := up(d, randFloats(r, n)), d.Alloc(1), d.Alloc(1), d.Alloc(n)
			d.Sum(x, n, false, s)
			d.Sum(x, n, true, m)
			d.FillFrom(m, n, true, g)
			acc := d.Alloc(2)
			d.SumSquares(x, n, acc)
			d.SumSquares(g, n-3, acc)
			return down(d, s, m, g, acc, x)
		}, false},
		{"LogSoftmax+Softmax+CrossEntropy", func(d backend.Device, r *rand.Rand) [][]float32 {
			x := randFloats(r, n)
			for i := range x {
				x[i] *= 4
			}
			X, gy := up(d, x), up(d, randFloats(r, n))
			ls, sm, gl, gs := d.Alloc(n), d.Alloc(n), d.Alloc(n), d.Alloc(n)
			d.LogSoftmaxRows(X, rows, cols, false, ls)
			d.LogSoftmaxRows(X, rows, cols, true, sm)
			d.SoftmaxRowsBackward(ls, gy, rows, cols, true, gl)
			d.SoftmaxRowsBackward(sm, gy, rows, cols, false, gs)
			tg := idx(r, rows, cols)
			count := rows
			for i := 0; i < rows; i += 5 {
				tg[i] = -100
				count--
			}
			T := upInts(d, tg)
			probs, losses, out, one, gx := d.Alloc(n), d.Alloc(2*rows), d.Alloc(1), up(d, []float32{1.5}), d.Alloc(n)
			d.CrossEntropyRows(X, T, rows, cols, probs, losses)
			d.CrossEntropySum(losses, T, rows, count, out)
			d.CrossEntropyBackward(probs, T, one, rows, cols, count, gx)
			d.Free(losses)
			return down(d, ls, sm, gl, gs, probs, out, gx, X, gy, T, one)
		}, true},
		{"BucketBias+BiasMaskedSoftmaxRows+SoftmaxBackwardBiasRows", func(d backend.Device, r *rand.Rand) [][]float32 {
			const B, H, Tq, Tk, nb = 3, 4, 5, 7, 6
			w, bk := up(d, randFloats(r, nb*H)), upInts(d, idx(r, Tq*Tk, nb))
			bias := d.Alloc(H * Tq * Tk)
			d.BucketBiasForward(w, H, bk, Tq*Tk, bias)
			lens := upInts(d, []int32{7, 0, 3})
			vis := d.Alloc(B * H * Tq)
			d.AttentionVisible(lens, H, Tq, Tk, false, vis)
			x := up(d, randFloats(r, B*H*Tq*Tk))
			d.BiasMaskedSoftmaxRows(x, B*H*Tq, Tk, vis, bias, H*Tq)
			g, ds := up(d, randFloats(r, B*H*Tq*Tk)), d.Alloc(B*H*Tq*Tk)
			d.SoftmaxBackwardBiasRows(x, g, ds, B*H*Tq, Tk, 1)
			gw := d.Alloc(nb * H)
			d.BucketBiasBackward(bias, H, bk, Tq*Tk, gw)
			return down(d, bias, x, g, ds, gw, w, bk, lens, vis)
		}, true},
		{"DecodeAttention+WriteRowsAt+AddInts", func(d backend.Device, r *rand.Rand) [][]float32 {
			const B, H, dh, capacity = 3, 2, 16, 21
			D := H * dh
			kc, vc := up(d, randFloats(r, B*capacity*D)), up(d, randFloats(r, B*capacity*D))
			pos := upInts(d, []int32{20, 0, 9})
			d.WriteRowsAt(up(d, randFloats(r, B*D)), D, pos, capacity, kc)
			d.WriteRowsAt(up(d, randFloats(r, B*D)), D, pos, capacity, vc)
			q, bias := up(d, randFloats(r, B*D)), up(d, randFloats(r, B*H*capacity))
			probs, out := d.Alloc(B*H*capacity), d.Alloc(B*D)
			d.DecodeAttention(q, kc, vc, H, capacity, pos, 1, false, 0.25, bias, B*H, probs, out)
			probs2, out2 := d.Alloc(B*H*capacity), d.Alloc(B*D)
			d.DecodeAttention(q, kc, vc, H, capacity, pos, 0, true, 0.25, nil, 1, probs2, out2)
			d.AddInts(pos, 1)
			return down(d, probs, out, probs2, out2, kc, vc, pos)
		}, true},
		{"DecodeBucketBias", func(d backend.Device, r *rand.Rand) [][]float32 {
			const n, H, capacity, nb = 3, 4, 9, 6
			w, rb, pos := up(d, randFloats(r, nb*H)), upInts(d, idx(r, capacity, nb)), upInts(d, []int32{0, 8, 4})
			y := d.Alloc(n * H * capacity)
			d.DecodeBucketBias(w, H, rb, pos, capacity, y)
			return down(d, y, w, rb, pos)
		}, true},
		{"SampleRows (greedy, temperature, top-k, top-p, both)", func(d backend.Device, r *rand.Rand) [][]float32 {
			const rows, V = 5, 300
			logits := randFloats(r, rows*V)
			for i := range logits {
				logits[i] *= 4
			}
			L := up(d, logits)
			var outs []backend.Buffer
			for _, s := range []backend.Sampling{{Greedy: true}, {InvT: 1.25}, {InvT: 1, TopK: 7, TopP: 1}, {InvT: 1, TopP: 0.8},
				{InvT: 0.5, TopK: 40, TopP: 0.9}} {
				states := upInts(d, idx(r, 4*rows, 1<<30))
				cands := d.Alloc(4 * rows * s.CandCap(V))
				out := d.Alloc(rows)
				d.SampleRows(L, rows, V, s, states, cands, out)
				d.Free(cands)
				outs = append(outs, out, states)
			}
			outs = append(outs, L)
			return down(d, outs...)
		}, true},
		{"Gemm (per-head batch)", func(d backend.Device, r *rand.Rand) [][]float32 {
			const B, H, T, dh = 2, 3, 5, 4
			D := H * dh
			q, k, s := up(d, randFloats(r, B*T*D)), up(d, randFloats(r, B*T*D)), d.Alloc(B*H*T*T)
			d.Gemm(false, true, T, T, dh, 0.5, q, 0, D, k, 0, D, 0, s, 0, T,
				backend.GemmBatch{Count: B * H, Inner: H, Outer: [3]int{T * D, T * D, H * T * T}, InnerStride: [3]int{dh, dh, T * T}})
			return down(d, s, q, k)
		}, false},
		{"Gemm (strided runs: per head, per sequence, one stride, transposes)", func(d backend.Device, r *rand.Rand) [][]float32 {
			var outs []backend.Buffer
			for _, sh := range [][3]int{{5, 2, 3}, {2, 6, 4}, {4, 3, 1}} { // sequences, heads, queries
				B, H, T, dh := sh[0], sh[1], sh[2], 8
				D := H * dh
				q, k, v := up(d, randFloats(r, B*T*D)), up(d, randFloats(r, B*7*D)), up(d, randFloats(r, B*7*D))
				s, o, g := d.Alloc(B*H*T*7), d.Alloc(B*T*D), d.Alloc(B*7*D)
				heads := func(outer, inner [3]int) backend.GemmBatch {
					return backend.GemmBatch{Count: B * H, Inner: H, Outer: outer, InnerStride: inner}
				}
				d.Gemm(false, true, T, 7, dh, 0.5, q, 0, D, k, 0, D, 0, s, 0, 7, heads([3]int{T * D, 7 * D, H * T * 7}, [3]int{dh, dh, T * 7}))
				d.Gemm(false, false, T, dh, 7, 1, s, 0, 7, v, 0, D, 0, o, 0, D, heads([3]int{H * T * 7, 7 * D, T * D}, [3]int{T * 7, dh, dh}))
				d.Gemm(true, false, 7, dh, T, 1, s, 0, 7, o, 0, D, 0, g, 0, D, heads([3]int{H * T * 7, T * D, 7 * D}, [3]int{T * 7, dh, dh}))
				outs = append(outs, s, o, g, q, k, v)
			}
			return down(d, outs...)
		}, false},
	}
}

// TestDeviceKernelsMatchEmulation runs every device kernel on the GPU and
// on the emulated device (the same C bodies on the CPU) over the same
// inputs: the outputs must agree to 1e-4 relative, and the number of
// values that differ in any bit is logged (0 expected for the kernels; the
// GEMM is cuBLAS's and differs in the last bits).
func TestDeviceKernelsMatchEmulation(t *testing.T) {
	g := open(t).Device()
	e := emudev.New().Device()
	for _, c := range deviceCases() {
		got := c.run(g, rand.New(rand.NewPCG(9, 10)))
		want := c.run(e, rand.New(rand.NewPCG(9, 10)))
		bits := 0
		for i := range want {
			if c.ints {
				// Integer outputs (visible counts) round-trip as float32
				// bits: they must be equal, not merely close.
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("%s: output %d[%d]: %#x on the GPU, %#x emulated", c.name, i, j, math.Float32bits(got[i][j]), math.Float32bits(want[i][j]))
					}
				}
			}
			closeTo(t, c.name, got[i], want[i])
			for j := range want[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
					bits++
				}
			}
		}
		t.Logf("%s: %d values differ in some bit from the emulation", c.name, bits)
	}
}

// TestDeviceStepsMatchCPU: three steps of the BERT-shaped conformance run
// with its weights placed on the GPU agree with the CPU to 1e-4 (losses,
// weights), and each step copies no more than its batch and the loss.
func TestDeviceStepsMatchCPU(t *testing.T) {
	run := conformance.SmallEncoder(3)
	backend.Use(backend.CPU())
	want, err := run.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := run.Run(open(t).Device())
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "losses", got.Losses, want.Losses)
	for i := range want.Weights {
		closeTo(t, "weights", got.Weights[i], want.Weights[i])
	}
	t.Logf("losses: gpu %v, cpu %v", got.Losses, want.Losses)
	for s, c := range got.PerStep {
		budget := got.InputBytes[s]
		if s == 0 {
			budget += int64(4 * run.Batch * run.Len)
		}
		t.Logf("step %d: %v", s, c)
		if c.Bytes() > budget {
			t.Errorf("step %d copied %d bytes, more than its batch and loss (%d)", s, c.Bytes(), budget)
		}
	}
}

// TestDeviceContrastiveAndPaSeRMatchCPU: the SimCSE-shaped run (clipping
// included) and the PaSeR-shaped run with their weights on the GPU agree
// with the CPU to 1e-4, every operator on the device, each step copying
// no more than its batch and logged scalars.
func TestDeviceContrastiveAndPaSeRMatchCPU(t *testing.T) {
	backend.Use(backend.CPU())
	g := open(t).Device()
	run := conformance.SmallContrastive(3)
	want, err := run.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := run.Run(g)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "contrastive losses", got.Losses, want.Losses)
	for i := range want.Weights {
		closeTo(t, "contrastive weights", got.Weights[i], want.Weights[i])
	}
	for s, c := range got.PerStep {
		t.Logf("contrastive step %d: %v", s, c)
		if c.Bytes() > got.InputBytes[s] {
			t.Errorf("contrastive step %d copied %d bytes, more than its batch and logged scalars (%d)", s, c.Bytes(), got.InputBytes[s])
		}
	}
	wantL, wantW, err := conformance.TrainSteps(3)
	if err != nil {
		t.Fatal(err)
	}
	p, err := conformance.TrainStepsOn(g, 3)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "PaSeR losses", p.Losses, wantL)
	for i := range wantW {
		closeTo(t, "PaSeR weights", p.Weights[i], wantW[i])
	}
	for s, c := range p.PerStep {
		t.Logf("PaSeR step %d: %v", s, c)
		if c.Bytes() > p.InputBytes {
			t.Errorf("PaSeR step %d copied %d bytes, more than its batch and loss (%d)", s, c.Bytes(), p.InputBytes)
		}
	}
}

// TestDeviceGemmPrecision: the GPU's mixed-precision GEMMs (TF32 through
// CUBLAS_COMPUTE_32F_FAST_TF32, bfloat16 operands converted by the
// repro_to_bf16 kernel) against the emulated ones (operands rounded to
// nearest even, the CPU's sgemm): bfloat16 to 1e-4 relative (the same
// rounded operands, FP32 sums in another order), TF32 to 2e-3 (cuBLAS's
// own TF32 conversion is unspecified); both differ from FP32. The
// attention grid is included (strided runs over bfloat16 copies).
func TestDeviceGemmPrecision(t *testing.T) {
	g := open(t).NewDevice().(*Device)
	e := emudev.New().NewDevice().(*emudev.Device)
	const B, H, T, dh = 3, 4, 9, 16
	D := H * dh
	r := rand.New(rand.NewPCG(12, 13))
	q, k := randFloats(r, B*T*D), randFloats(r, B*T*D)
	run := func(d backend.Device, p backend.Precision) []float32 {
		d.(backend.PrecisionDevice).SetGemmPrecision(p)
		defer d.(backend.PrecisionDevice).SetGemmPrecision(backend.FP32)
		Q, K, S := up(d, q), up(d, k), d.Alloc(B*H*T*T)
		d.Gemm(false, true, T, T, dh, 0.25, Q, 0, D, K, 0, D, 0, S, 0, T,
			backend.GemmBatch{Count: B * H, Inner: H, Outer: [3]int{T * D, T * D, H * T * T}, InnerStride: [3]int{dh, dh, T * T}})
		W := d.Alloc(D * D)
		d.Upload(W, 0, k[:D*D], "test")
		Y := d.Alloc(B * T * D)
		d.Gemm(false, true, B*T, D, D, 1, Q, 0, D, W, 0, D, 0, Y, 0, D, backend.GemmBatch{})
		out := down(d, S, Y)
		d.Free(Q)
		d.Free(K)
		d.Free(W)
		return append(out[0], out[1]...)
	}
	fp32 := run(e, backend.FP32)
	for _, c := range []struct {
		p   backend.Precision
		tol float64
	}{{backend.BF16, 1e-4}, {backend.TF32, 2e-3}} {
		got, want := run(g, c.p), run(e, c.p)
		differ := 0
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); !(d <= c.tol*math.Max(1, math.Abs(float64(want[i])))) {
				t.Fatalf("%v: value %d on the GPU %v, emulated %v", c.p, i, got[i], want[i])
			}
			if got[i] != fp32[i] {
				differ++
			}
		}
		if differ == 0 {
			t.Errorf("%v: the GPU's values are all FP32's", c.p)
		}
		t.Logf("%v: %d of %d values differ from FP32", c.p, differ, len(got))
	}
}
