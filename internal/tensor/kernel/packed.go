package kernel

import (
	"fmt"
	"sync"
)

// PackedB is op(B) packed once for many products with different A: in
// inference a weight matrix meets batch after batch of activations, and
// when A has few rows (32 sequences decoding one token each) packing B on
// every call costs as much as the multiply itself. Its panels are exactly
// what Sgemm packs, so SgemmPacked gives Sgemm's bits.
type PackedB struct {
	k, n int
	// slices[s] holds op(B)[s*kc : s*kc+kb, 0:n] as ceil(n/nr)
	// micro-panels of kb rows by nr columns (packB's layout).
	slices [][]float32
	// The operand itself, for the products too small to pack (Sgemm
	// multiplies those directly; so must SgemmPacked, to give its bits).
	transB bool
	b      []float32
	ldb    int
}

// K and N are op(B)'s dimensions.
func (p *PackedB) K() int { return p.k }

// N is op(B)'s number of columns.
func (p *PackedB) N() int { return p.n }

// PackB packs op(B), k x n (B row-major with leading dimension ldb,
// transposed when transB), for SgemmPacked. B must not change while the
// result is in use; it is read again only for tiny products.
func PackB(transB bool, k, n int, b []float32, ldb int) (*PackedB, error) {
	if k <= 0 || n <= 0 {
		return nil, fmt.Errorf("sgemm: PackB of a %dx%d operand", k, n)
	}
	if err := checkOperand("B", transB, k, n, b, ldb); err != nil {
		return nil, err
	}
	p := &PackedB{k: k, n: n, transB: transB, b: b, ldb: ldb}
	// Columns are packed in parallel, in nr-aligned ranges: each range
	// writes only its own micro-panels.
	t := Threads()
	for pc := 0; pc < k; pc += kc {
		kb := min(kc, k-pc)
		buf := make([]float32, roundUp(n, nr)*kb)
		nt := (n + nr - 1) / nr
		var wg sync.WaitGroup
		for w := 0; w < t; w++ {
			j0, j1 := min(n, nt*w/t*nr), min(n, nt*(w+1)/t*nr)
			if j0 >= j1 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				packB(transB, b, ldb, pc, kb, j0, j1-j0, buf[j0*kb:])
			}()
		}
		wg.Wait()
		p.slices = append(p.slices, buf)
	}
	return p, nil
}

// SgemmPacked computes C = alpha*op(A)*op(B) + beta*C like Sgemm, op(B)
// being the packed pb (k x n), op(A) m x k. The results are Sgemm's, bit
// for bit, with the same partition across goroutines.
func SgemmPacked(transA bool, m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int) {
	k, n := pb.k, pb.n
	if err := checkOperand("A", transA, m, k, a, lda); err != nil {
		panic(err)
	}
	if err := checkOperand("C", false, m, n, c, ldc); err != nil {
		panic(err)
	}
	if m <= 0 {
		return
	}
	if alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	if m*n*k <= smallWork {
		smallGemm(transA, pb.transB, m, n, k, alpha, a, lda, pb.b, pb.ldb, beta, nil, c, ldc)
		return
	}
	g := gemm{transA: transA, k: k, alpha: alpha, a: a, lda: lda, beta: beta, c: c, ldc: ldc}
	partition(m, n, k, func(r0, r1, c0, c1 int) { g.runPacked(r0, r1, c0, c1, pb) })
}

// runPacked is run with B's panels taken from pb instead of packed here.
func (g *gemm) runPacked(r0, r1, c0, c1 int, pb *PackedB) {
	if r0 >= r1 || c0 >= c1 {
		return
	}
	ws := workspaces.Get().(*workspace)
	defer workspaces.Put(ws)
	mcap := min(mc, roundUp(r1-r0, mr))
	kcap := min(kc, g.k)
	if cap(ws.pa) < mcap*kcap {
		ws.pa = make([]float32, mcap*kcap)
	}
	pa := ws.pa[:mcap*kcap]
	for jc := c0; jc < c1; jc += nc {
		nb := min(nc, c1-jc)
		for s, pc := 0, 0; pc < g.k; s, pc = s+1, pc+kc {
			kb := min(kc, g.k-pc)
			beta := g.beta
			if pc > 0 {
				beta = 1
			}
			bp := pb.slices[s][jc*kb:]
			for ic := r0; ic < r1; ic += mc {
				mb := min(mc, r1-ic)
				packA(g.transA, g.a, g.lda, ic, mb, pc, kb, pa)
				g.macro(ic, mb, jc, nb, kb, pa, bp, beta, nil, &ws.tile)
			}
		}
	}
}
