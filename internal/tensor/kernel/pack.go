package kernel

// Packing helpers in assembly (pack_amd64.go), nil where there is none:
// they copy values only, so a packed panel is the same with or without
// them. The copyPanels helpers copy several full micro-panels per call,
// reading each source row's values for all of them together (the rows are
// often a multiple of 4 KiB apart, and a line read once per panel can be
// evicted from its L1 set before the next panel needs it);
// interleave6x16 takes 16 columns per step where interleave6 takes 8.
var (
	copyRows16     func(dst, src *float32, lds, rows int)
	copyPanels16x4 func(dst, src *float32, lds, rows int)
	copyPanels6    func(dst, src *float32, lds, rows, panels int)
	copyRows6      func(dst, src *float32, lds, rows int)
	interleave6    func(dst, src *float32, lds, blocks int)
	interleave6x16 func(dst, src *float32, lds, blocks int)
)

// packHelpers is one set of packing helpers the CPU can run; packPaths
// lists them, the last one in use, so the tests can compare every set.
type packHelpers struct {
	name                        string
	copyRows16, copyRows6       func(dst, src *float32, lds, rows int)
	copyPanels16x4              func(dst, src *float32, lds, rows int)
	copyPanels6                 func(dst, src *float32, lds, rows, panels int)
	interleave6, interleave6x16 func(dst, src *float32, lds, blocks int)
	transpose8                  func(src *float32, lds int, dst *float32, ldd int, blocks int)
}

var packPaths []packHelpers

func (h packHelpers) use() {
	copyRows16, copyRows6, copyPanels16x4 = h.copyRows16, h.copyRows6, h.copyPanels16x4
	copyPanels6 = h.copyPanels6
	interleave6, interleave6x16 = h.interleave6, h.interleave6x16
	transpose8 = h.transpose8
}

// packA copies op(A)[i0:i0+mb, p0:p0+kb] into dst as ceil(mb/mr) micro-panels,
// each kb columns of mr consecutive values (row index fastest), zero-padding
// rows past mb so the micro-kernel never needs a partial-height variant.
func packA(trans bool, a []float32, lda, i0, mb, p0, kb int, dst []float32) {
	ir0 := 0 // rows left to the loop below
	if full := mb / mr; trans && copyPanels6 != nil && full > 0 && kb > 0 {
		// All full panels in one pass over the rows of a.
		_ = a[(p0+kb-1)*lda+i0+full*mr-1]
		_ = dst[full*mr*kb-1]
		copyPanels6(&dst[0], &a[p0*lda+i0], lda, kb, full)
		ir0 = full * mr
	}
	for ir := ir0; ir < mb; ir += mr {
		panel := dst[ir*kb : (ir+mr)*kb]
		mm := min(mr, mb-ir)
		if trans {
			// op(A)[i, p] = a[p*lda+i]: each k step is a contiguous run.
			if mm == mr && copyRows6 != nil && kb > 0 {
				_ = a[(p0+kb-1)*lda+i0+ir+mr-1]
				_ = panel[kb*mr-1]
				copyRows6(&panel[0], &a[p0*lda+i0+ir], lda, kb)
				continue
			}
			for p := 0; p < kb; p++ {
				src := a[(p0+p)*lda+i0+ir:]
				d := panel[p*mr : p*mr+mr : p*mr+mr]
				if mm == mr {
					d[0], d[1], d[2], d[3], d[4], d[5] = src[0], src[1], src[2], src[3], src[4], src[5]
					continue
				}
				copy(d, src[:mm])
				clear(d[mm:])
			}
			continue
		}
		// op(A)[i, p] = a[i*lda+p]. A full panel reads its six rows side by
		// side, so the panel is written sequentially.
		if mm == mr {
			base := (i0+ir)*lda + p0
			r0 := a[base : base+kb]
			r1 := a[base+lda : base+lda+kb]
			r2 := a[base+2*lda : base+2*lda+kb]
			r3 := a[base+3*lda : base+3*lda+kb]
			r4 := a[base+4*lda : base+4*lda+kb]
			r5 := a[base+5*lda : base+5*lda+kb]
			panel = panel[:kb*mr]
			q0 := 0 // columns left to the loop below
			if kb >= 8 {
				_ = r5[kb-1]
				if interleave6x16 != nil && kb >= 16 {
					interleave6x16(&panel[0], &r0[0], lda, kb/16)
					q0 = kb / 16 * 16
				}
				if interleave6 != nil && kb-q0 >= 8 {
					interleave6(&panel[q0*mr], &r0[q0], lda, (kb-q0)/8)
					q0 += (kb - q0) / 8 * 8
				}
			}
			for p := q0; p < kb; p++ {
				d := (*[mr]float32)(panel[p*mr:])
				d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
			}
			continue
		}
		for i := 0; i < mm; i++ {
			src := a[(i0+ir+i)*lda+p0 : (i0+ir+i)*lda+p0+kb]
			for p, v := range src {
				panel[p*mr+i] = v
			}
		}
		for i := mm; i < mr; i++ {
			for p := 0; p < kb; p++ {
				panel[p*mr+i] = 0
			}
		}
	}
}

// packB copies op(B)[p0:p0+kb, j0:j0+nb] into dst as ceil(nb/nr)
// micro-panels, each kb rows of nr consecutive values, zero-padding columns
// past nb.
func packB(trans bool, b []float32, ldb, p0, kb, j0, nb int, dst []float32) {
	for jr := 0; jr < nb; jr += nr {
		if !trans && copyPanels16x4 != nil && jr+4*nr <= nb && kb > 0 {
			// Four full panels side by side: 256 contiguous bytes per row.
			_ = b[(p0+kb-1)*ldb+j0+jr+4*nr-1]
			_ = dst[(jr+4*nr)*kb-1]
			copyPanels16x4(&dst[jr*kb], &b[p0*ldb+j0+jr], ldb, kb)
			jr += 3 * nr
			continue
		}
		panel := dst[jr*kb : (jr+nr)*kb]
		nn := min(nr, nb-jr)
		if !trans {
			// op(B)[p, j] = b[p*ldb+j]: each k step is a contiguous run.
			if nn == nr && copyRows16 != nil && kb > 0 {
				_ = b[(p0+kb-1)*ldb+j0+jr+nr-1]
				_ = panel[kb*nr-1]
				copyRows16(&panel[0], &b[p0*ldb+j0+jr], ldb, kb)
				continue
			}
			if nn == nr {
				// A fixed-size array copy (a memmove call per 64 bytes).
				for p := 0; p < kb; p++ {
					off := (p0+p)*ldb + j0 + jr
					*(*[nr]float32)(panel[p*nr:]) = *(*[nr]float32)(b[off:])
				}
				continue
			}
			for p := 0; p < kb; p++ {
				off := (p0+p)*ldb + j0 + jr
				d := panel[p*nr : p*nr+nr : p*nr+nr]
				copy(d, b[off:off+nn])
				clear(d[nn:])
			}
			continue
		}
		// op(B)[p, j] = b[j*ldb+p]. A full panel reads its rows eight at a
		// time side by side, writing 32 contiguous bytes per k step.
		if nn == nr {
			for j := 0; j < nr; j += 8 {
				base := (j0+jr+j)*ldb + p0
				r0 := b[base : base+kb]
				r1 := b[base+ldb : base+ldb+kb]
				r2 := b[base+2*ldb : base+2*ldb+kb]
				r3 := b[base+3*ldb : base+3*ldb+kb]
				r4 := b[base+4*ldb : base+4*ldb+kb]
				r5 := b[base+5*ldb : base+5*ldb+kb]
				r6 := b[base+6*ldb : base+6*ldb+kb]
				r7 := b[base+7*ldb : base+7*ldb+kb]
				q0 := 0 // k steps left to the loop below
				if transpose8 != nil && kb >= 8 {
					_ = r7[kb-1]
					_ = panel[(kb-1)*nr+j+7]
					transpose8(&r0[0], ldb, &panel[j], nr, kb/8)
					q0 = kb / 8 * 8
				}
				for p := q0; p < kb; p++ {
					d := (*[8]float32)(panel[p*nr+j:])
					d[0], d[1], d[2], d[3] = r0[p], r1[p], r2[p], r3[p]
					d[4], d[5], d[6], d[7] = r4[p], r5[p], r6[p], r7[p]
				}
			}
			continue
		}
		for j := 0; j < nn; j++ {
			src := b[(j0+jr+j)*ldb+p0 : (j0+jr+j)*ldb+p0+kb]
			for p, v := range src {
				panel[p*nr+j] = v
			}
		}
		for j := nn; j < nr; j++ {
			for p := 0; p < kb; p++ {
				panel[p*nr+j] = 0
			}
		}
	}
}
