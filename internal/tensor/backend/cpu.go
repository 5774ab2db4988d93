package backend

// cpuBackend is the pure-Go default backend.
type cpuBackend struct{}

// CPU returns the pure-Go backend.
func CPU() Backend { return cpuBackend{} }

func (cpuBackend) Name() string { return "cpu" }

// Sgemm is a straightforward reference implementation; the optimised kernel
// replaces it.
func (cpuBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
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
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}
