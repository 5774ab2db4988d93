package metrics

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
)

// This file computes cosine-similarity matrices S = unit(A) unit(B)^T for
// the O(n^2 d) metrics (uniformity, retrieval) without a per-pair loop.
//
// Exactness. Every similarity is the plain sequential float64 sum, over
// dimensions k in ascending order, of the products a_k*b_k of the float64
// unit vectors (x / max(||x||, 1e-12), torch's F.normalize, as before). Each
// product is rounded before it is added (float64(x*y) forbids FMA fusion),
// and a single accumulator per output carries over the k panels. So S[i][j]
// is a pure function of the two rows -- not of their positions, tile
// boundaries, the number of goroutines or the path taken -- which keeps
// exact ties exact (two identical candidates score the same bits, which the
// pessimistic retrieval ranks rely on) and makes results identical run
// after run.
//
// Two paths compute that same sum:
//
//   - dense: a blocked matrix multiply. Strips of stripRows rows of A and
//     tiles of tileRows rows of B are converted to float64 unit rows and
//     packed so that a 4x8 register-tiled micro-kernel streams them over
//     panels of kPanel dimensions (the panel stays in L1/L2 while every
//     micro-tile of the output tile uses it). Only one strip and one tile
//     per worker are in float64, never the whole of A; B is packed once
//     when its float64 copy fits prepackBytes, else tile by tile for each
//     strip (8192-d x 30k sentences would be 2 GB in float64).
//   - sparse: bag-of-words encoders (TF-IDF) give vectors with a few dozen
//     non-zeros among thousands of dimensions. An inverted index of B (per
//     dimension, the rows with a non-zero there, in row order) visits only
//     the non-zero products; skipping a zero product does not change a
//     float64 sum, so the result has the same bits as the dense path.
//
// The path is chosen by counting non-zeros: the sparse path when its
// multiply-adds, weighted by sparseWeight for the indirect access, are
// fewer than the dense path's.

const (
	mr        = 4   // micro-tile rows (of A)
	nr        = 8   // micro-tile columns (rows of B): 4x8 accumulators are 8 AVX2 registers
	stripRows = 128 // rows of A per work unit
	tileRows  = 128 // rows of B per packed tile
	kPanel    = 256 // dimensions per panel
	// sparseWeight is the cost of a sparse (indirect) multiply-add relative
	// to a dense one: measured about 3.5 ns against 0.3 ns (AVX2 kernel) on
	// the 2-core development machine, at densities of 5-20%.
	sparseWeight = 12
)

// simPath selects how similarities are computed. Tests force each path to
// check that both give the same bits.
type simPath int

const (
	pathAuto simPath = iota
	pathDense
	pathSparse
)

// prepackBytes bounds the float64 copy of B packed once for all strips
// (2,700 x 768 is 17 MB); a larger B is packed tile by tile per strip,
// trading re-conversion for memory. A variable so that tests can take
// either branch.
var prepackBytes float64 = 64 << 20

// forcePath, when not pathAuto, overrides the cost-based choice (tests only).
var forcePath = pathAuto

// unitRows is a set of float32 vectors with the norms that make them unit
// vectors; the float64 unit rows are materialised only block by block.
type unitRows struct {
	rows  [][]float32
	norm  []float64 // max(||x||, 1e-12), as torch's F.normalize divides by
	sq    []float64 // ||unit(x)||^2 summed as the kernels sum it: about 1, or 0 for a zero vector
	dim   int
	nzCol []int // per dimension, how many rows are non-zero there
	nz    int   // non-zeros in all
}

// raw makes u's rows scale by 1 instead of their norms, so the similarity
// matrix holds plain inner products (retrieval by dot product; sq, which
// only the geometry of unit rows reads, is left as it was).
func (u *unitRows) raw() {
	for i := range u.norm {
		u.norm[i] = 1
	}
}

// newUnitRows validates that all vectors have one dimension and computes
// norms and non-zero counts. what names the vectors in errors.
func newUnitRows(vs [][]float32, what string) (*unitRows, error) {
	if len(vs) == 0 {
		return nil, fmt.Errorf("no %s", what)
	}
	u := &unitRows{rows: vs, norm: make([]float64, len(vs)), sq: make([]float64, len(vs)), dim: len(vs[0])}
	u.nzCol = make([]int, u.dim)
	for i, v := range vs {
		if len(v) != u.dim {
			return nil, fmt.Errorf("%s %d has %d dimensions, %s 0 has %d", what, i, len(v), what, u.dim)
		}
		var ss float64
		for k, x := range v {
			if x != 0 {
				ss += float64(x) * float64(x)
				u.nzCol[k]++
				u.nz++
			}
		}
		u.norm[i] = math.Max(math.Sqrt(ss), 1e-12)
		var sq float64
		for _, x := range v {
			if x != 0 { // a zero adds nothing to the sum: skip the division
				y := float64(x) / u.norm[i]
				sq += float64(y * y)
			}
		}
		u.sq[i] = sq
	}
	return u, nil
}

// simStrips computes S = unit(a) unit(b)^T strip by strip and hands each
// strip to consume on the worker that computed it: s[(i-i0)*ld + (j-j0)] is
// S[i][j] for i in [i0, i1) and j in [j0, len(b)). With upper set (a and b
// the same rows), only j > i is needed: j0 is i0 and entries with j <= i are
// unspecified. consume runs on several goroutines at once and must write
// only state owned by rows [i0, i1), so results do not depend on
// scheduling.
func simStrips(a, b *unitRows, upper bool, consume func(i0, i1 int, s []float64, ld, j0 int)) {
	if a.dim != b.dim {
		panic("metrics: similarity of rows of different dimensions")
	}
	m, n := len(a.rows), len(b.rows)
	sparse := forcePath == pathSparse
	if forcePath == pathAuto {
		var sparseCost float64
		for k, c := range a.nzCol {
			sparseCost += float64(c) * float64(b.nzCol[k])
		}
		sparse = sparseWeight*sparseCost < float64(m)*float64(n)*float64(a.dim)
	}
	var index *invIndex
	var bAll []float64
	switch {
	case sparse:
		index = newInvIndex(b)
	case float64(n)*float64(b.dim)*8 <= prepackBytes:
		bAll = pack(nil, b, 0, n, nr)
	}
	strips := (m + stripRows - 1) / stripRows
	workers := min(runtime.GOMAXPROCS(0), strips)
	next := make(chan int, strips)
	for s := 0; s < strips; s++ {
		next <- s // in order: with upper, the first strips are the longest
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []float64
			var pk packer
			for s := range next {
				i0 := s * stripRows
				i1 := min(i0+stripRows, m)
				j0 := 0
				if upper {
					j0 = i0
				}
				ld := n - j0
				need := (i1 - i0) * ld
				if cap(buf) < need {
					buf = make([]float64, need)
				}
				out := buf[:need]
				if sparse {
					index.strip(a, i0, i1, j0, upper, out, ld)
				} else {
					pk.strip(a, b, bAll, i0, i1, j0, out, ld)
				}
				consume(i0, i1, out, ld, j0)
			}
		}()
	}
	wg.Wait()
}

// packer holds one worker's packed float64 blocks.
type packer struct {
	pa, pb []float64
}

// pack writes unit rows [r0, r1) of u, group rows at a time interleaved
// over all dimensions (dst[g*group*dim + k*group + r] is dimension k of row
// g*group+r), padding the last group with zero rows.
func pack(dst []float64, u *unitRows, r0, r1, group int) []float64 {
	groups := (r1 - r0 + group - 1) / group
	need := groups * group * u.dim
	if cap(dst) < need {
		dst = make([]float64, need)
	}
	dst = dst[:need]
	for g := 0; g < groups; g++ {
		blk := dst[g*group*u.dim : (g+1)*group*u.dim]
		for r := 0; r < group; r++ {
			i := r0 + g*group + r
			if i >= r1 {
				for k := 0; k < u.dim; k++ {
					blk[k*group+r] = 0
				}
				continue
			}
			norm := u.norm[i]
			for k, x := range u.rows[i] {
				blk[k*group+r] = float64(x) / norm
			}
		}
	}
	return dst
}

// strip computes rows [i0, i1) of a against rows [j0, len(b)) of b with
// the dense kernel into out (row stride ld). bAll, when not nil, is all of
// b packed; otherwise each tile of b is packed here.
func (p *packer) strip(a, b *unitRows, bAll []float64, i0, i1, j0 int, out []float64, ld int) {
	d := a.dim
	p.pa = pack(p.pa, a, i0, i1, mr)
	m := i1 - i0
	for i := range out {
		out[i] = 0
	}
	var acc [mr * nr]float64
	for t0 := j0; t0 < len(b.rows); t0 += tileRows {
		t1 := min(t0+tileRows, len(b.rows))
		var bt []float64
		if bAll != nil {
			bt = bAll[t0*d:] // t0 is a multiple of nr: tile groups are whole groups of bAll
		} else {
			p.pb = pack(p.pb, b, t0, t1, nr)
			bt = p.pb
		}
		for k0 := 0; k0 < d; k0 += kPanel {
			k1 := min(k0+kPanel, d)
			for gi := 0; gi*mr < m; gi++ {
				ap := p.pa[gi*mr*d+k0*mr : gi*mr*d+k1*mr]
				for gj := 0; gj*nr < t1-t0; gj++ {
					bp := bt[gj*nr*d+k0*nr : gj*nr*d+k1*nr]
					// Carry the accumulators over panels: load, add this
					// panel's products, store.
					for r := 0; r < mr; r++ {
						i := gi*mr + r
						for c := 0; c < nr; c++ {
							j := t0 - j0 + gj*nr + c
							if i < m && j < t1-j0 {
								acc[r*nr+c] = out[i*ld+j]
							} else {
								acc[r*nr+c] = 0
							}
						}
					}
					micro(ap, bp, &acc)
					for r := 0; r < mr; r++ {
						i := gi*mr + r
						for c := 0; c < nr; c++ {
							j := t0 - j0 + gj*nr + c
							if i < m && j < t1-j0 {
								out[i*ld+j] = acc[r*nr+c]
							}
						}
					}
				}
			}
		}
	}
}

// micro is the micro-kernel: kernel4x8Go, or its AVX2 version on amd64
// CPUs that have it (gram_amd64.go); microName says which, for benchmarks.
var (
	micro     = kernel4x8Go
	microName = "go-4x8"
)

// kernel4x8Go adds to acc (row-major 4x8) the products of a 4-row panel a
// (a[k*4+r]) and an 8-row panel b (b[k*8+c]) over the panel's dimensions,
// each product rounded before it is added, one accumulator per output. It
// works two columns at a time so that its 8 accumulators stay in registers.
func kernel4x8Go(a, b []float64, acc *[mr * nr]float64) {
	k := min(len(a)/mr, len(b)/nr)
	for c := 0; c < nr; c += 2 {
		c00, c01 := acc[0*nr+c], acc[0*nr+c+1]
		c10, c11 := acc[1*nr+c], acc[1*nr+c+1]
		c20, c21 := acc[2*nr+c], acc[2*nr+c+1]
		c30, c31 := acc[3*nr+c], acc[3*nr+c+1]
		a, b := a[:k*mr], b[:k*nr]
		for kk := 0; kk < k; kk++ {
			ak, bk := a[kk*mr:kk*mr+mr], b[kk*nr+c:kk*nr+c+2]
			a0, a1, a2, a3 := ak[0], ak[1], ak[2], ak[3]
			b0, b1 := bk[0], bk[1]
			c00 += float64(a0 * b0)
			c01 += float64(a0 * b1)
			c10 += float64(a1 * b0)
			c11 += float64(a1 * b1)
			c20 += float64(a2 * b0)
			c21 += float64(a2 * b1)
			c30 += float64(a3 * b0)
			c31 += float64(a3 * b1)
		}
		acc[0*nr+c], acc[0*nr+c+1] = c00, c01
		acc[1*nr+c], acc[1*nr+c+1] = c10, c11
		acc[2*nr+c], acc[2*nr+c+1] = c20, c21
		acc[3*nr+c], acc[3*nr+c+1] = c30, c31
	}
}

// invIndex lists, per dimension, the rows of b that are non-zero there (in
// row order) with their unit-vector values.
type invIndex struct {
	start []int // dimension k's entries are row[start[k]:start[k+1]]
	row   []int32
	val   []float64
	n     int
}

func newInvIndex(b *unitRows) *invIndex {
	ix := &invIndex{start: make([]int, b.dim+1), row: make([]int32, b.nz), val: make([]float64, b.nz), n: len(b.rows)}
	for k, c := range b.nzCol {
		ix.start[k+1] = ix.start[k] + c
	}
	fill := append([]int(nil), ix.start[:b.dim]...)
	for j, v := range b.rows {
		norm := b.norm[j]
		for k, x := range v {
			if x != 0 {
				ix.row[fill[k]] = int32(j)
				ix.val[fill[k]] = float64(x) / norm
				fill[k]++
			}
		}
	}
	return ix
}

// strip computes rows [i0, i1) of a against the indexed rows [j0, n) into
// out (row stride ld). Dimensions are visited in ascending order, so each
// output is the same sequential sum as the dense kernel's, less the zero
// products. With upper, only j > i is computed.
func (ix *invIndex) strip(a *unitRows, i0, i1, j0 int, upper bool, out []float64, ld int) {
	for i := range out {
		out[i] = 0
	}
	for i := i0; i < i1; i++ {
		row := out[(i-i0)*ld : (i-i0+1)*ld]
		from := int32(j0)
		if upper {
			from = int32(i + 1)
		}
		norm := a.norm[i]
		for k, x := range a.rows[i] {
			if x == 0 {
				continue
			}
			y := float64(x) / norm
			rs := ix.row[ix.start[k]:ix.start[k+1]]
			vs := ix.val[ix.start[k]:ix.start[k+1]]
			first := 0
			if from > 0 {
				first = sort.Search(len(rs), func(p int) bool { return rs[p] >= from })
			}
			for p := first; p < len(rs); p++ {
				row[int(rs[p])-j0] += float64(y * vs[p])
			}
		}
	}
}
