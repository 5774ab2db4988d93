//go:build !cuda

package cuda

import "testing"

// The implementation needs -tags cuda (and a GPU to test: -tags cuda,gpu).
func TestBuiltWithoutCUDA(t *testing.T) {
	t.Skip("skipped: built without -tags cuda; the CUDA backend is not compiled in")
}
