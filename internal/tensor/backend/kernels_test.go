package backend

import "testing"

// The CPU and OpenBLAS backends leave the non-GEMM kernels to the
// operators' own loops, whose numerics the recorded baselines depend on.
func TestKernelsOfCPU(t *testing.T) {
	if _, ok := KernelsOf(CPU()); ok {
		t.Fatal("the CPU backend implements Kernels")
	}
	for _, name := range Names() {
		if name == "cuda" {
			continue // opening it needs a GPU; see cuda_guard_test.go
		}
		b, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := KernelsOf(b); ok {
			t.Errorf("backend %s implements Kernels", name)
		}
	}
}
