package transformer

import (
	"os"
	"testing"

	"repro/internal/tensor"
	"repro/internal/tensor/tensortest"
)

// TestStepDigest logs a digest of the losses and weights after three
// steps of BenchmarkSimCSEStep's setup, to compare builds bit for bit (run
// it before and after a change to the operators). REPRO_STEP_DIGEST=1 runs
// it: it takes tens of seconds.
func TestStepDigest(t *testing.T) {
	if os.Getenv("REPRO_STEP_DIGEST") == "" {
		t.Skip("REPRO_STEP_DIGEST not set")
	}
	const L, D, H, FF, V, B, T = 4, 256, 4, 1024, 8192, 64, 32
	c := Config{VocabSize: V, Hidden: D, Layers: L, Heads: H, Intermediate: FF, MaxPosition: T,
		HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-5}
	r := newSimCSERun(t, c, B, T, 1) // with padding: masks exercised
	var losses []float32
	for i := 0; i < 3; i++ {
		losses = append(losses, r.step(t))
	}
	xs := [][]float32{losses}
	for _, np := range r.enc.NamedParams() {
		xs = append(xs, tensor.Data(np.Param))
	}
	t.Logf("losses %v digest %s", losses, tensortest.Digest(xs...))
}
