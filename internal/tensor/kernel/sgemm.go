package kernel

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Register block of the micro-kernel and cache blocking. mc*kc floats of
// packed A (144 KiB) sit in the 512 KiB L2 of a Zen core with room for the
// streamed B micro-panels; kc*nr floats of B (16 KiB) sit in the 32 KiB L1;
// nc bounds the packed B panel (kc*nc*4 = 4 MiB, in L3).
const (
	mr = 6
	nr = 16
	kc = 256
	mc = 144
	nc = 4096
)

// Thresholds in multiply-adds (m*n*k). Measured on the 2-core EPYC: the
// packed path already wins at 8x8x8 (0.9 us against 2.2 us for the direct
// loop), so only the tiniest products skip packing; a second goroutine pays
// for its start-up above a few hundred thousand.
const (
	smallWork    = 256
	parallelWork = 1 << 19
)

var threads atomic.Int64

// SetThreads sets how many goroutines one Sgemm call may use; n <= 0 means
// runtime.GOMAXPROCS(0), the default. Results do not depend on it.
func SetThreads(n int) { threads.Store(int64(n)) }

// Threads reports the number of goroutines one large Sgemm call uses.
func Threads() int {
	if n := int(threads.Load()); n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// Check reports whether the arguments describe valid row-major operands: it
// returns an error naming the first inconsistent dimension, leading dimension
// or slice length, and nil when Sgemm can run.
func Check(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if m < 0 || n < 0 || k < 0 {
		return fmt.Errorf("sgemm: negative dimension m=%d n=%d k=%d", m, n, k)
	}
	if err := checkOperand("A", transA, m, k, a, lda); err != nil {
		return err
	}
	if err := checkOperand("B", transB, k, n, b, ldb); err != nil {
		return err
	}
	return checkOperand("C", false, m, n, c, ldc)
}

// checkOperand checks an operand whose op() is rows x cols; stored, it is
// cols x rows when trans.
func checkOperand(name string, trans bool, rows, cols int, x []float32, ld int) error {
	sr, sc := rows, cols
	if trans {
		sr, sc = cols, rows
	}
	if ld < max(1, sc) {
		return fmt.Errorf("sgemm: leading dimension of %s is %d, want >= %d (stored %dx%d, transposed=%v)", name, ld, max(1, sc), sr, sc, trans)
	}
	if sr == 0 || sc == 0 {
		return nil
	}
	if need := (sr-1)*ld + sc; len(x) < need {
		return fmt.Errorf("sgemm: %s has %d elements, want >= %d (stored %dx%d, leading dimension %d)", name, len(x), need, sr, sc, ld)
	}
	return nil
}

// Sgemm computes C = alpha*op(A)*op(B) + beta*C with op(A) m x k, op(B)
// k x n and C m x n, all row-major with leading dimensions lda, ldb, ldc. As
// in BLAS, C is not read when beta == 0, and A and B are not read when
// alpha == 0 or k == 0. Invalid arguments are a programming error and panic
// with the message of Check; call Check first to get an error instead.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if err := Check(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		panic(err)
	}
	sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, nil, c, ldc)
}

// SgemmBias computes C = alpha*op(A)*op(B) + bias, bias (n values) added
// to every row: bit for bit what copying bias into every row of C and then
// calling Sgemm with beta = 1 gives, NaN payloads included, without that
// copy. C is only written. The first k slice's beta*C term, the one that
// reads the copied bias, reads the bias row itself (row stride 0) in the
// same instruction.
func SgemmBias(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int) {
	if err := Check(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		panic(err)
	}
	if len(bias) < n {
		panic(fmt.Errorf("sgemm: bias has %d elements, want >= %d", len(bias), n))
	}
	sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, 1, bias[:n:n], c, ldc)
}

// sgemm is Sgemm on checked arguments; a non-nil bias (then beta is 1)
// stands in for C's initial rows.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		if bias != nil {
			for i := 0; i < m; i++ {
				copy(c[i*ldc:i*ldc+n], bias)
			}
			return
		}
		scaleC(m, n, beta, c, ldc)
		return
	}
	if m*n*k <= smallWork {
		smallGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, bias, c, ldc)
		return
	}
	g := gemm{transA: transA, transB: transB, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, bias: bias, c: c, ldc: ldc}
	if t := Threads(); t > 1 && m*n*k >= parallelWork {
		if mt, nt := (m+mr-1)/mr, (n+nr-1)/nr; mt >= nt {
			g.rowBands(m, n, min(t, mt))
			return
		}
	}
	partition(m, n, k, g.run)
}

// rowBands is partition's split into row bands with B packed once for all
// of them: run on each band would pack the whole of op(B) per band, and
// with few rows per band or a long k (the dX product of a large output
// layer) that packing is a sizeable share of the call. For each (column
// block, k slice) the t goroutines pack their share of the panel's
// micro-panels into a shared buffer, wait for one another, and run their
// bands' row blocks against it as run does; the buffers alternate, so one
// wait per slice suffices (a goroutine packing slice s+1 has passed the
// wait of slice s, which every goroutine reaches only after finishing
// slice s-1, the last reader of the buffer it overwrites). The tiles, the
// packed values and each tile's kernel calls are run's, so are the bits.
func (g *gemm) rowBands(m, n, t int) {
	mt := (m + mr - 1) / mr
	kcap := min(kc, g.k)
	size := roundUp(min(nc, n), nr) * kcap
	sh := sharedPanels.Get().(*[2][]float32)
	defer sharedPanels.Put(sh)
	for i := range sh {
		if cap(sh[i]) < size {
			sh[i] = make([]float32, size)
		}
	}
	bar := newBarrier(t)
	var wg sync.WaitGroup
	for w := 0; w < t; w++ {
		r0, r1 := min(m, (mt*w/t)*mr), min(m, (mt*(w+1)/t)*mr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := workspaces.Get().(*workspace)
			defer workspaces.Put(ws)
			mcap := min(mc, roundUp(r1-r0, mr))
			if cap(ws.pa) < mcap*kcap {
				ws.pa = make([]float32, mcap*kcap)
			}
			pa := ws.pa[:mcap*kcap]
			slice := 0
			for jc := 0; jc < n; jc += nc {
				nb := min(nc, n-jc)
				pt := (nb + nr - 1) / nr // micro-panels in this column block
				for pc := 0; pc < g.k; pc += kc {
					kb := min(kc, g.k-pc)
					beta, bin := g.beta, g.bias
					if pc > 0 {
						beta, bin = 1, nil
					}
					pb := sh[slice%2][:roundUp(nb, nr)*kb]
					slice++
					if j0, j1 := min(nb, pt*w/t*nr), min(nb, pt*(w+1)/t*nr); j0 < j1 {
						packB(g.transB, g.b, g.ldb, pc, kb, jc+j0, j1-j0, pb[j0*kb:])
					}
					bar.wait()
					for ic := r0; ic < r1; ic += mc {
						mb := min(mc, r1-ic)
						packA(g.transA, g.a, g.lda, ic, mb, pc, kb, pa)
						g.macro(ic, mb, jc, nb, kb, pa, pb, beta, bin, &ws.tile)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// sharedPanels holds rowBands' two packed-B buffers, pooled across calls.
var sharedPanels = sync.Pool{New: func() any { return new([2][]float32) }}

// barrier is a reusable rendezvous of n goroutines.
type barrier struct {
	mu      sync.Mutex
	cond    sync.Cond
	n, left int
	round   int
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n, left: n}
	b.cond.L = &b.mu
	return b
}

// wait returns once all n goroutines have called it (in this round).
func (b *barrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left--
	if b.left == 0 {
		b.left = b.n
		b.round++
		b.cond.Broadcast()
		return
	}
	for r := b.round; r == b.round; {
		b.cond.Wait()
	}
}

// partition runs f over C (m x n) in bands: on the calling goroutine below
// parallelWork multiply-adds or with one thread; otherwise the dimension
// with more tiles is split into Threads() bands of whole tiles, so every
// tile keeps its position on the grid anchored at C's origin. Every band
// runs on its own goroutine while the caller waits: a band kept on the
// calling goroutine would leave the last-spawned band in this P's runnext
// slot, where an idle P is slow to steal it, and the two bands would often
// run one after the other.
func partition(m, n, k int, f func(r0, r1, c0, c1 int)) {
	t := Threads()
	if t <= 1 || m*n*k < parallelWork {
		f(0, m, 0, n)
		return
	}
	mt, nt := (m+mr-1)/mr, (n+nr-1)/nr
	var wg sync.WaitGroup
	if mt >= nt {
		t = min(t, mt)
		for w := 0; w < t; w++ {
			r0, r1 := min(m, (mt*w/t)*mr), min(m, (mt*(w+1)/t)*mr)
			wg.Add(1)
			go func() { defer wg.Done(); f(r0, r1, 0, n) }()
		}
	} else {
		t = min(t, nt)
		for w := 0; w < t; w++ {
			c0, c1 := min(n, (nt*w/t)*nr), min(n, (nt*(w+1)/t)*nr)
			wg.Add(1)
			go func() { defer wg.Done(); f(0, m, c0, c1) }()
		}
	}
	wg.Wait()
}

// scaleC sets C = beta*C, writing zeros without reading C when beta == 0.
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		if beta != 1 {
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// smallGemm is the direct triple loop for products too small to pack; a
// non-nil bias is read in place of C's initial values.
func smallGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for p := 0; p < k; p++ {
				var x, y float32
				if transA {
					x = a[p*lda+i]
				} else {
					x = a[i*lda+p]
				}
				if transB {
					y = b[j*ldb+p]
				} else {
					y = b[p*ldb+j]
				}
				s += x * y
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				x := c[i*ldc+j]
				if bias != nil {
					x = bias[j]
				}
				c[i*ldc+j] = alpha*s + beta*x
			}
		}
	}
}

// gemm holds one call's operands; run computes a rectangle of C.
type gemm struct {
	transA, transB bool
	k              int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
	// bias, when not nil, is read in the first k slice in place of C's
	// initial rows (SgemmBias).
	bias []float32
}

// workspace is one goroutine's packing buffers, pooled across calls.
type workspace struct {
	pa, pb []float32
	tile   [mr * nr]float32
}

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

// run computes rows [r0, r1) and columns [c0, c1) of C. r0 and c0 are
// multiples of mr and nr (or the whole range), so tiles stay on the grid.
func (g *gemm) run(r0, r1, c0, c1 int) {
	if r0 >= r1 || c0 >= c1 {
		return
	}
	ws := workspaces.Get().(*workspace)
	defer workspaces.Put(ws)
	mcap := min(mc, roundUp(r1-r0, mr))
	ncap := min(nc, roundUp(c1-c0, nr))
	kcap := min(kc, g.k)
	if cap(ws.pa) < mcap*kcap {
		ws.pa = make([]float32, mcap*kcap)
	}
	if cap(ws.pb) < ncap*kcap {
		ws.pb = make([]float32, ncap*kcap)
	}
	pa, pb := ws.pa[:mcap*kcap], ws.pb[:ncap*kcap]

	for jc := c0; jc < c1; jc += nc {
		nb := min(nc, c1-jc)
		for pc := 0; pc < g.k; pc += kc {
			kb := min(kc, g.k-pc)
			// The first k slice applies the caller's beta; later slices
			// accumulate onto it.
			beta, bin := g.beta, g.bias
			if pc > 0 {
				beta, bin = 1, nil
			}
			packB(g.transB, g.b, g.ldb, pc, kb, jc, nb, pb)
			for ic := r0; ic < r1; ic += mc {
				mb := min(mc, r1-ic)
				packA(g.transA, g.a, g.lda, ic, mb, pc, kb, pa)
				g.macro(ic, mb, jc, nb, kb, pa, pb, beta, bin, &ws.tile)
			}
		}
	}
}

// macro multiplies a packed mb x kb block of A by a packed kb x nb panel of B
// into C[ic:ic+mb, jc:jc+nb]. The beta term reads bin (the bias row,
// indexed by C's column) in place of C when bin is not nil.
func (g *gemm) macro(ic, mb, jc, nb, kb int, pa, pb []float32, beta float32, bin []float32, tile *[mr * nr]float32) {
	jr := 0
	if microWide != nil && mb >= mr && kb >= wideMinK {
		// Pairs of full-width B micro-panels against the full-height A
		// micro-panels; the bottom edge tile of each pair goes through
		// micro below, as it would without the wide kernel.
		for ; jr+2*nr <= nb; jr += 2 * nr {
			bp0, bp1 := pb[jr*kb:(jr+nr)*kb], pb[(jr+nr)*kb:(jr+2*nr)*kb]
			ir := 0
			if microTall != nil {
				for ; ir+2*mr <= mb; ir += 2 * mr {
					a0, a1 := pa[ir*kb:(ir+mr)*kb], pa[(ir+mr)*kb:(ir+2*mr)*kb]
					off := (ic+ir)*g.ldc + jc + jr
					c := g.c[off : off+(2*mr-1)*g.ldc+2*nr]
					cin, ldcin := in(c, g.ldc, bin, jc+jr, 2*nr)
					microTall(kb, a0, a1, bp0, bp1, c, g.ldc, cin, ldcin, g.alpha, beta)
				}
			}
			for ; ir+mr <= mb; ir += mr {
				ap := pa[ir*kb : (ir+mr)*kb]
				off := (ic+ir)*g.ldc + jc + jr
				c := g.c[off : off+(mr-1)*g.ldc+2*nr]
				cin, ldcin := in(c, g.ldc, bin, jc+jr, 2*nr)
				microWide(kb, ap, bp0, bp1, c, g.ldc, cin, ldcin, g.alpha, beta)
			}
			if ir < mb {
				g.edge(ic, ir, mb, jc, jr, nr, kb, pa, bp0, beta, bin, tile)
				g.edge(ic, ir, mb, jc, jr+nr, nr, kb, pa, bp1, beta, bin, tile)
			}
		}
	}
	for ; jr < nb; jr += nr {
		nn := min(nr, nb-jr)
		bp := pb[jr*kb : (jr+nr)*kb]
		for ir := 0; ir < mb; ir += mr {
			mm := min(mr, mb-ir)
			ap := pa[ir*kb : (ir+mr)*kb]
			off := (ic+ir)*g.ldc + jc + jr
			if mm == mr && nn == nr {
				c := g.c[off : off+(mr-1)*g.ldc+nr]
				cin, ldcin := in(c, g.ldc, bin, jc+jr, nr)
				micro(kb, ap, bp, c, g.ldc, cin, ldcin, g.alpha, beta)
				continue
			}
			g.edge(ic, ir, mb, jc, jr, nn, kb, pa, bp, beta, bin, tile)
		}
	}
}

// edge computes the partial tile at rows ic+ir.. (at most mr, up to mb) and
// columns jc+jr.. (nn of them) in scratch, then merges the valid part into
// C with the same alpha/beta semantics (the beta term read from bin when
// it is not nil, as in macro).
func (g *gemm) edge(ic, ir, mb, jc, jr, nn, kb int, pa, bp []float32, beta float32, bin []float32, tile *[mr * nr]float32) {
	mm := min(mr, mb-ir)
	ap := pa[ir*kb : (ir+mr)*kb]
	off := (ic+ir)*g.ldc + jc + jr
	micro(kb, ap, bp, tile[:], nr, tile[:], nr, 1, 0)
	for i := 0; i < mm; i++ {
		crow := g.c[off+i*g.ldc : off+i*g.ldc+nn]
		trow := tile[i*nr : i*nr+nn]
		if beta == 0 {
			for j := range crow {
				crow[j] = g.alpha * trow[j]
			}
		} else {
			irow, _ := in(crow, 0, bin, jc+jr, nn)
			irow = irow[:len(crow)]
			for j := range crow {
				crow[j] = g.alpha*trow[j] + beta*irow[j]
			}
		}
	}
}

// in returns the beta term's source for a tile whose C starts at c (row
// stride ldc) in column col, width columns wide: C itself, or the bias
// row's columns with row stride 0.
func in(c []float32, ldc int, bias []float32, col, width int) ([]float32, int) {
	if bias == nil {
		return c, ldc
	}
	return bias[col : col+width], 0
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// wideMinK is the shortest k slice the wide kernel takes: below it two
// 6x16 calls were faster on the Sapphire Rapids host it was measured on
// (32x32x64 attention products: 0.86 ms against 1.03 ms of CPU for 256
// heads).
var wideMinK = 128
