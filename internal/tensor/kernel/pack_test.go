package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"repro/internal/tensor/tensortest"
)

// packSpecials are values whose bits a packing copy must keep: NaN payloads
// and signs, infinities, signed zeros, denormals, extremes.
var packSpecials = []uint32{
	0x7fc00000, 0xffc00001, 0x7f800001, 0xff812345, 0x7f800000, 0xff800000,
	0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x7f7fffff, 0x00800000,
}

// packOperand fills n floats with random bit patterns and special values.
func packOperand(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		if rng.IntN(8) == 0 {
			x[i] = math.Float32frombits(packSpecials[rng.IntN(len(packSpecials))])
		} else {
			x[i] = math.Float32frombits(rng.Uint32())
		}
	}
	return x
}

// withPack runs f with the helper set h in use, then restores the set that
// was in use.
func withPack(h packHelpers, f func()) {
	saved := packHelpers{copyRows16: copyRows16, copyRows6: copyRows6,
		interleave6: interleave6, interleave6x16: interleave6x16,
		transpose8: transpose8}
	h.use()
	defer saved.use()
	f()
}

// TestPackHelpersMatchGo packs panels of every layout with each set of
// assembly helpers the CPU has (AVX-512, AVX2, SSE) and with the Go loops
// alone: the panels must be identical bit for bit, edges (partial panels,
// k not a multiple of 4, 8 or 16, offsets into the operand, leading
// dimensions wider than the panel) included, and nothing past the panels
// may be written.
func TestPackHelpersMatchGo(t *testing.T) {
	if len(packPaths) == 0 {
		t.Skip("no packing helpers on this CPU")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const guard = 19 // floats past the panels that must stay untouched
	for _, trans := range []bool{false, true} {
		for _, kb := range []int{1, 3, 4, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 40, 47, 255, 256} {
			for _, nb := range []int{1, 5, 6, 7, 12, 13, 15, 16, 17, 31, 32, 40, 144} {
				for _, off := range []int{0, 3} {
					for _, extra := range []int{0, 5} {
						// op(X) is (off+nb) x (off+kb) for A, (off+kb) x (off+nb)
						// for B; the operand ends where its last row does.
						ld := off + max(kb, nb) + extra
						x := packOperand(rng, (off+max(kb, nb)-1)*ld+off+max(kb, nb))
						for _, isA := range []bool{true, false} {
							pack := func(dst []float32) {
								if isA {
									packA(trans, x, ld, off, nb, off, kb, dst)
								} else {
									packB(trans, x, ld, off, kb, off, nb, dst)
								}
							}
							size := roundUp(nb, nr) * kb
							if isA {
								size = roundUp(nb, mr) * kb
							}
							want := make([]float32, size+guard)
							for i := range want {
								want[i] = -2
							}
							withPack(packHelpers{}, func() { pack(want[:size]) })
							for _, h := range packPaths {
								got := make([]float32, size+guard)
								for i := range got {
									got[i] = -2
								}
								withPack(h, func() { pack(got[:size]) })
								for i := range got {
									if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
										t.Fatalf("%s: A=%v trans=%v kb=%d nb=%d off=%d ld=%d: element %d of %d is %#x, want %#x",
											h.name, isA, trans, kb, nb, off, ld, i, size,
											math.Float32bits(got[i]), math.Float32bits(want[i]))
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkPack packs the blocks of the reference step's products (kb =
// 256: an mc x kb block of A, a kb x 1024 panel of B, each layout) with
// each set of helpers the CPU has, the Go loops included. The blocks are
// taken from a 32 MiB operand in turn, so the source is mostly not in cache,
// as in a training step. On a shared machine compare cpu-s/op, and paths
// within one run.
func BenchmarkPack(b *testing.B) {
	const kb, mb, nb, ld, rows = kc, mc, 1024, 1024, 8192
	rng := rand.New(rand.NewPCG(1, 2))
	x := packOperand(rng, rows*ld)
	paths := append([]packHelpers{{name: "go"}}, packPaths...)
	for _, layout := range []struct {
		name      string
		isA, tran bool
	}{{"A_N", true, false}, {"A_T", true, true}, {"B_N", false, false}, {"B_T", false, true}} {
		size := roundUp(nb, nr) * kb
		if layout.isA {
			size = roundUp(mb, mr) * kb
		}
		dst := make([]float32, size)
		for _, h := range paths {
			b.Run(layout.name+"/"+h.name, func(b *testing.B) {
				withPack(h, func() {
					b.SetBytes(int64(4 * size))
					var cpu tensortest.CPUTimer
					cpu.Start()
					for i := 0; i < b.N; i++ {
						r, c := i%(rows/nb)*nb, i%4*kb // a 1024-row band, a 256-column slice
						switch {
						case layout.isA && !layout.tran:
							packA(false, x, ld, r+i%7*mb, mb, c, kb, dst)
						case layout.isA:
							packA(true, x, ld, c, mb, r+i%3*kb, kb, dst)
						case !layout.tran:
							packB(false, x, ld, r+i%3*kb, kb, 0, nb, dst)
						default:
							packB(true, x, ld, c, kb, r, nb, dst)
						}
					}
					cpu.Report(b)
				})
			})
		}
	}
}
