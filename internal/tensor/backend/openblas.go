//go:build openblas

package backend

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>

// Declared here rather than taken from cblas.h, which the Debian
// alternatives system may point at another BLAS's header.
extern void openblas_set_num_threads(int);
extern int openblas_get_num_threads(void);
extern char *openblas_get_corename(void);
extern char *openblas_get_config(void);
*/
import "C"

import (
	"fmt"

	"repro/internal/tensor/kernel"
)

// OpenBLAS threading and determinism: OpenBLAS reads OPENBLAS_NUM_THREADS (or
// OMP_NUM_THREADS) when the library loads and otherwise uses every core;
// SetOpenBLASThreads changes it at run time. Its sgemm splits C among threads
// and never the k dimension, so for a fixed thread count and CPU the results
// are bit-identical run after run; they may change with the thread count
// (edge tiles move) or the CPU (Debian's build picks kernels at run time).
// Debian's libopenblas0-pthread (0.3.21) may be called from several
// goroutines at once (TestOpenBLASConcurrent does); each call then starts its
// own OpenBLAS threads, so callers that already parallelise (attention heads)
// should set one OpenBLAS thread or accept oversubscription.

type openblasBackend struct{}

// OpenBLAS returns the backend that calls cblas_sgemm from the system's
// OpenBLAS (Debian: libopenblas-dev). Built only with -tags openblas.
func OpenBLAS() Backend { return openblasBackend{} }

// SetOpenBLASThreads sets OpenBLAS's thread count (n >= 1).
func SetOpenBLASThreads(n int) { C.openblas_set_num_threads(C.int(max(1, n))) }

// OpenBLASThreads reports OpenBLAS's thread count.
func OpenBLASThreads() int { return int(C.openblas_get_num_threads()) }

// OpenBLASConfig reports the OpenBLAS build and the kernel family it chose
// for this CPU (e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Haswell MAX_THREADS=64
// / core Zen"), for provenance records: it decides speed and result bits.
func OpenBLASConfig() string {
	return C.GoString(C.openblas_get_config()) + " / core " + C.GoString(C.openblas_get_corename())
}

func (openblasBackend) Name() string { return "openblas" }

func (openblasBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	// Validate here: a bad leading dimension would make OpenBLAS print to
	// stderr and return, and a short slice would let it read out of bounds.
	if err := kernel.Check(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		panic(fmt.Errorf("openblas: %w", err))
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		// OpenBLAS handles this too, but A and B may be empty slices here.
		kernel.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ta, tb := uint32(C.CblasNoTrans), uint32(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, C.enum_CBLAS_TRANSPOSE(ta), C.enum_CBLAS_TRANSPOSE(tb),
		C.blasint(m), C.blasint(n), C.blasint(k), C.float(alpha),
		(*C.float)(&a[0]), C.blasint(lda), (*C.float)(&b[0]), C.blasint(ldb),
		C.float(beta), (*C.float)(&c[0]), C.blasint(ldc))
}

func init() {
	Register("openblas", "openblas", func(arg string) (Backend, error) {
		if arg != "" {
			return nil, fmt.Errorf("the openblas backend takes no argument, got %q", arg)
		}
		return OpenBLAS(), nil
	})
}
