package kernel

// micro is the micro-kernel in use: the assembly kernel where the CPU
// supports it (see micro_amd64.go), the portable Go kernel otherwise. It has
// the contract of kernel6x16AVX2: the full mr x nr tile of c (row stride ldc)
// becomes alpha*(Ap*Bp) + beta*cin, cin being an mr x nr tile with row
// stride ldcin (c and ldc, or a bias row with stride 0), and cin is not read
// when beta == 0.
var (
	micro     = genericKernel
	microName = "go-6x16"
	// microWide, when not nil, computes two adjacent full tiles (6x32: A
	// micro-panel a against B micro-panels b0 and b1) with micro's bits.
	microWide func(k int, a, b0, b1, c []float32, ldc int, cin []float32, ldcin int, alpha, beta float32)
	// microTall, when not nil (only with microWide), computes the 12x32
	// block of two A micro-panels (a0 above a1) against b0 and b1 with
	// micro's bits.
	microTall func(k int, a0, a1, b0, b1, c []float32, ldc int, cin []float32, ldcin int, alpha, beta float32)
)

// genericKernel is the portable micro-kernel. Go does not vectorise, so it
// keeps a 2x4 block of accumulators in registers (fits the 16 float registers
// of amd64 with the operands) and sweeps the 6x16 tile in 12 passes over the
// packed panels, which stay in L1. Summation over k is in increasing order, as
// in the assembly kernel, so partitioning never changes a result.
func genericKernel(k int, a, b, c []float32, ldc int, cin []float32, ldcin int, alpha, beta float32) {
	a = a[:k*mr]
	b = b[:k*nr]
	for i := 0; i < mr; i += 2 {
		for j := 0; j < nr; j += 4 {
			var c00, c01, c02, c03, c10, c11, c12, c13 float32
			for p := 0; p < k; p++ {
				ap := a[p*mr+i : p*mr+i+2 : p*mr+i+2]
				bp := b[p*nr+j : p*nr+j+4 : p*nr+j+4]
				a0, a1 := ap[0], ap[1]
				b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
				c00 += a0 * b0
				c01 += a0 * b1
				c02 += a0 * b2
				c03 += a0 * b3
				c10 += a1 * b0
				c11 += a1 * b1
				c12 += a1 * b2
				c13 += a1 * b3
			}
			r0 := c[i*ldc+j : i*ldc+j+4 : i*ldc+j+4]
			r1 := c[(i+1)*ldc+j : (i+1)*ldc+j+4 : (i+1)*ldc+j+4]
			if beta == 0 {
				r0[0], r0[1], r0[2], r0[3] = alpha*c00, alpha*c01, alpha*c02, alpha*c03
				r1[0], r1[1], r1[2], r1[3] = alpha*c10, alpha*c11, alpha*c12, alpha*c13
			} else {
				s0 := cin[i*ldcin+j : i*ldcin+j+4 : i*ldcin+j+4]
				s1 := cin[(i+1)*ldcin+j : (i+1)*ldcin+j+4 : (i+1)*ldcin+j+4]
				r0[0] = alpha*c00 + beta*s0[0]
				r0[1] = alpha*c01 + beta*s0[1]
				r0[2] = alpha*c02 + beta*s0[2]
				r0[3] = alpha*c03 + beta*s0[3]
				r1[0] = alpha*c10 + beta*s1[0]
				r1[1] = alpha*c11 + beta*s1[1]
				r1[2] = alpha*c12 + beta*s1[2]
				r1[3] = alpha*c13 + beta*s1[3]
			}
		}
	}
}
