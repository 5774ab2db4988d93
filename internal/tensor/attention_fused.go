package tensor

import (
	"repro/internal/tensor/backend"
	"repro/internal/tensor/kernel"
)

// Fused attention on the CPU backend. One call per (sequence, head)
// block computes, tile of query rows by tile, the scores, the bias, the
// mask and the softmax, and the value product, while the tile's rows are
// in L1; the backward pass does the same for the score gradients and dQ.
// The products go through kernel.Direct (no packing of the operands, B
// read as stored; K and V transposed once per block for the two products
// that take them transposed) instead of one Sgemm call per product, which
// at attention's sizes (32x32x64) spends most of its time packing.
//
// Bits: every element is computed with the arithmetic Sgemm gives it in
// the per-head formulation (kernel.ArithOf of that head's whole product:
// FMA chains under the assembly kernels, mul+add for tiny products; k in
// increasing order, the same k slices), and the softmax, bias, mask and
// dropout loops are the unfused path's own, element by element. So the
// fused path's results are the per-head path's, bit for bit (NaNs aside:
// only their NaN-ness is fixed); TestAttentionFusedBits checks it.

// fusedAttention says whether the fused loops run: on the CPU backend,
// whose Sgemm is the one kernel.Direct reproduces (OpenBLAS and the device
// backends keep the per-head products). A variable for the tests.
var fusedAttention = func() bool { return backend.Current() == backend.CPU() }

// fusedRows is the number of query rows in a tile: the tile's scores
// (rows x Tk) stay within 16 KiB, in multiples of 4 (Direct's row block).
func fusedRows(tk int) int {
	return max(4, (4096/max(tk, 1))&^3)
}

// forwardFused computes the output O and f.probs (f.drop already drawn).
func (f *attentionFn) forwardFused(Q, K, V, bias, O []float32, visible func(b, i int) int) {
	s := f.s
	B, H, Tq, Tk, D, dh := s.Batch, s.Heads, s.QLen, s.KLen, f.d, f.dh
	arS := kernel.ArithOf(Tq, Tk, dh) // S = scale Q_h K_h^T
	arO := kernel.ArithOf(Tq, dh, Tk) // O_h = P'_h V_h
	rt := fusedRows(Tk)
	ParallelFor(B*H, 1, func(lo, hi int) {
		kt := allocRaw(dh * Tk)
		defer free(kt)
		var buf []float32
		if f.drop != nil {
			buf = allocRaw(min(rt, Tq) * Tk)
			defer free(buf)
		}
		for bh := lo; bh < hi; bh++ {
			b, h := bh/H, bh%H
			qo, ko := b*Tq*D+h*dh, b*Tk*D+h*dh
			kernel.Transpose(kt, Tk, K[ko:], D, Tk, dh)
			P := f.probs[bh*Tq*Tk : (bh+1)*Tq*Tk]
			for i0 := 0; i0 < Tq; i0 += rt {
				rows := min(rt, Tq-i0)
				kernel.Direct(arS, false, rows, Tk, dh, f.scale, Q[qo+i0*D:], D, kt, Tk, P[i0*Tk:], Tk)
				for i := i0; i < i0+rows; i++ {
					row, vis := P[i*Tk:(i+1)*Tk], visible(b, i)
					if br := f.biasRow(bias, bh, i); br != nil {
						addBias(row, br, vis)
					}
					maskedSoftmaxRow(row, vis)
				}
				pv := P[i0*Tk : (i0+rows)*Tk]
				if f.drop != nil {
					dm := f.drop[bh*Tq*Tk+i0*Tk : bh*Tq*Tk+(i0+rows)*Tk]
					d := buf[:len(pv)]
					for j, p := range pv {
						d[j] = p * dm[j]
					}
					pv = d
				}
				kernel.Direct(arO, false, rows, dh, Tk, 1, pv, Tk, V[ko:], D, O[qo+i0*D:], D)
			}
		}
	})
}

// backwardFused computes the gradients the unfused Backward computes, into
// the same buffers (nil where not needed; dsAll holds the score gradients
// when the bias needs them).
func (f *attentionFn) backwardFused(Q, K, V, G, gq, gk, gv, dsAll []float32) {
	s := f.s
	B, H, Tq, Tk, D, dh := s.Batch, s.Heads, s.QLen, s.KLen, f.d, f.dh
	arV := kernel.ArithOf(Tk, dh, Tq) // dV = P'^T dO
	arP := kernel.ArithOf(Tq, Tk, dh) // dP' = dO V^T
	arQ := kernel.ArithOf(Tq, dh, Tk) // dQ = dS K
	arK := kernel.ArithOf(Tk, dh, Tq) // dK = dS^T Q
	rt := fusedRows(Tk)
	ParallelFor(B*H, 1, func(lo, hi int) {
		dP := allocRaw(Tq * Tk) // written whole, tile by tile
		defer free(dP)
		vt := allocRaw(dh * Tk)
		defer free(vt)
		var PV []float32
		if f.drop != nil {
			PV = allocRaw(Tq * Tk)
			defer free(PV)
		}
		for bh := lo; bh < hi; bh++ {
			b, h := bh/H, bh%H
			P := f.probs[bh*Tq*Tk : (bh+1)*Tq*Tk]
			qo, ko := b*Tq*D+h*dh, b*Tk*D+h*dh
			var dm []float32
			pv := P
			if f.drop != nil {
				dm = f.drop[bh*Tq*Tk : (bh+1)*Tq*Tk]
				for i, p := range P {
					PV[i] = p * dm[i]
				}
				pv = PV
			}
			if gv != nil {
				kernel.Direct(arV, true, Tk, dh, Tq, 1, pv, Tk, G[qo:], D, gv[ko:], D)
			}
			if gq == nil && gk == nil && dsAll == nil {
				continue
			}
			kernel.Transpose(vt, Tk, V[ko:], D, Tk, dh)
			for i0 := 0; i0 < Tq; i0 += rt {
				rows := min(rt, Tq-i0)
				tile := dP[i0*Tk : (i0+rows)*Tk]
				kernel.Direct(arP, false, rows, Tk, dh, 1, G[qo+i0*D:], D, vt, Tk, tile, Tk)
				if dm != nil {
					dmt := dm[i0*Tk : (i0+rows)*Tk]
					for i := range tile {
						tile[i] *= dmt[i]
					}
				}
				for i := i0; i < i0+rows; i++ {
					pr, dr := P[i*Tk:(i+1)*Tk], dP[i*Tk:(i+1)*Tk]
					var dot float32
					for j, p := range pr {
						dot += p * dr[j]
					}
					if dsAll != nil {
						ds := dsAll[bh*Tq*Tk+i*Tk : bh*Tq*Tk+(i+1)*Tk]
						for j, p := range pr {
							ds[j] = p * (dr[j] - dot)
						}
					}
					for j, p := range pr {
						dr[j] = p * (dr[j] - dot) * f.scale
					}
				}
				if gq != nil {
					kernel.Direct(arQ, false, rows, dh, Tk, 1, tile, Tk, K[ko:], D, gq[qo+i0*D:], D)
				}
			}
			if gk != nil {
				kernel.Direct(arK, true, Tk, dh, Tq, 1, dP, Tk, Q[qo:], D, gk[ko:], D)
			}
		}
	})
}
