package kernel

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPackHelpersMatchGo packs panels of every layout with the assembly
// helpers and with the Go loops alone: the panels must be identical, edges
// (partial panels, k not a multiple of 8, offsets into the operand)
// included.
func TestPackHelpersMatchGo(t *testing.T) {
	if copyRows16 == nil && copyRows6 == nil && interleave6 == nil && transpose8 == nil {
		t.Skip("no packing helpers on this CPU")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	h16, h6, hi, t8 := copyRows16, copyRows6, interleave6, transpose8
	goOnly := func(f func()) {
		copyRows16, copyRows6, interleave6, transpose8 = nil, nil, nil, nil
		defer func() { copyRows16, copyRows6, interleave6, transpose8 = h16, h6, hi, t8 }()
		f()
	}
	for _, trans := range []bool{false, true} {
		for _, kb := range []int{1, 7, 8, 9, 16, 31, 256} {
			for _, nb := range []int{1, 6, 12, 13, 16, 17, 40} {
				// The operand: op(X) is (off+nb) x (off+kb) for A, (off+kb) x (off+nb) for B.
				const off = 3
				ld := off + max(kb, nb) + 5
				x := make([]float32, (off+max(kb, nb)+1)*ld)
				for i := range x {
					x[i] = rng.Float32()
				}
				for _, isA := range []bool{true, false} {
					var got, want []float32
					if isA {
						size := roundUp(nb, mr) * kb
						got, want = make([]float32, size), make([]float32, size)
						for i := range want {
							got[i], want[i] = -1, -2
						}
						packA(trans, x, ld, off, nb, off, kb, got)
						goOnly(func() { packA(trans, x, ld, off, nb, off, kb, want) })
					} else {
						size := roundUp(nb, nr) * kb
						got, want = make([]float32, size), make([]float32, size)
						for i := range want {
							got[i], want[i] = -1, -2
						}
						packB(trans, x, ld, off, kb, off, nb, got)
						goOnly(func() { packB(trans, x, ld, off, kb, off, nb, want) })
					}
					if !slices.Equal(got, want) {
						t.Fatalf("A=%v trans=%v kb=%d nb=%d: panels differ", isA, trans, kb, nb)
					}
				}
			}
		}
	}
}
