//go:build cuda

package backend

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// hasGPU looks for an NVIDIA device without touching the CUDA driver.
func hasGPU() bool {
	if _, err := os.Stat("/dev/nvidia0"); err == nil {
		return true
	}
	_, err := exec.LookPath("nvidia-smi")
	return err == nil
}

// TestCUDABackend runs the GPU tests of package cuda in their own binary
// (built with -tags cuda,gpu). They cannot live in this binary: importing
// gorgonia.org/cu exits the process at init when there is no GPU, and the
// binary would not even load without libcuda.so.1. So this test decides
// first, and says plainly when it did not run them.
func TestCUDABackend(t *testing.T) {
	if !hasGPU() {
		t.Skip("skipped: no GPU (no /dev/nvidia0, no nvidia-smi): the CUDA backend tests in ./cuda did not run")
	}
	if testing.Short() {
		t.Skip("skipped in -short mode: the CUDA backend tests in ./cuda did not run")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(goTool, "test", "-count=1", "-v", "-tags", "cuda,gpu", "./cuda")
	cmd.Env = os.Environ() // CGO_CFLAGS / CGO_LDFLAGS from .ci/cuda-headers.sh
	out, err := cmd.CombinedOutput()
	t.Logf("go test -tags cuda,gpu ./cuda:\n%s", out)
	if err != nil {
		t.Fatalf("CUDA backend tests failed: %v", err)
	}
}
