package t5

import (
	"os"
	"testing"

	"repro/internal/tensor"
	"repro/internal/tensor/tensortest"
)

// TestStepDigest logs a digest of the losses and weights after three
// steps of BenchmarkTrainStep's setup, to compare builds bit for bit (run
// it before and after a change to the operators). REPRO_STEP_DIGEST=1 runs
// it: it takes tens of seconds.
func TestStepDigest(t *testing.T) {
	if os.Getenv("REPRO_STEP_DIGEST") == "" {
		t.Skip("REPRO_STEP_DIGEST not set")
	}
	r := newTrainRun(t)
	var losses []float32
	for i := 0; i < 3; i++ {
		losses = append(losses, r.step(t))
	}
	xs := [][]float32{losses}
	for _, p := range r.m.Params() {
		xs = append(xs, tensor.Data(p))
	}
	t.Logf("losses %v digest %s", losses, tensortest.Digest(xs...))
}
