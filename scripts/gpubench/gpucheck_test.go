package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCheck runs ../gpu-check.sh with PATH set to dir alone, so that
// nvidia-smi is whatever dir holds (nothing, or a fake).
func runCheck(t *testing.T, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "../gpu-check.sh")
	cmd.Env = []string{"PATH=" + dir, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestGPUCheckWithoutGPU: on a machine without a GPU the script fails at
// once, with one line naming the reason and exit status 1.
func TestGPUCheckWithoutGPU(t *testing.T) {
	empty := t.TempDir()
	fake := t.TempDir()
	// nvidia-smi installed but no driver, as on a container without the
	// device: it exits non-zero.
	script := "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'\nexit 9\n"
	if err := os.WriteFile(filepath.Join(fake, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	none := t.TempDir()
	if err := os.WriteFile(filepath.Join(none, "nvidia-smi"), []byte("#!/bin/sh\necho 'No devices were found'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{empty, "gpu-check: FAILED: no NVIDIA GPU: nvidia-smi is not installed"},
		{fake, "gpu-check: FAILED: no NVIDIA GPU: nvidia-smi -L failed (no driver or no device)"},
		{none, "gpu-check: FAILED: no NVIDIA GPU: nvidia-smi -L lists none"},
	} {
		out, err := runCheck(t, c.dir)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("exit %v, want status 1; output %q", err, out)
		}
		if got := strings.TrimRight(out, "\n"); got != c.want {
			t.Errorf("output %q, want the one line %q", got, c.want)
		}
	}
}
