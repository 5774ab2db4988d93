// Command gpubench measures training and generation throughput on a GPU
// for scripts/gpu-check.sh: BERT-base-shaped and T5-base-shaped training
// steps with the whole step on the device (internal/tensor's device path)
// and GPT-2-small-shaped generation (still on the copy-per-call path: the
// one-query decoding attention has no device path yet), each with the
// fraction of the GPU's FP32 peak it reaches. It needs -tags cuda; built
// without, it says so and exits 2.
//
//	go run -tags cuda ./scripts/gpubench [-steps N] [-quick]
package main

import (
	"fmt"
	"strings"
)

// peakTable is the FP32 (non-tensor-core) peak of the GPUs this project may
// be lent, in TFLOP/s, from NVIDIA's data sheets (boost clock). The H100
// and H200 SXM share the GH100 SM array (132 SMs x 128 FP32 lanes x 2 x
// 1.98 GHz = 66.9); the H100 PCIe has 114 SMs at 1.755 GHz (51.2). Matched
// by substring of nvidia-smi's name, first match wins, so more specific
// names come first.
var peakTable = []struct {
	match  string
	tflops float64
}{
	{"H100 PCIe", 51.2},
	{"H100 NVL", 60.0},
	{"H100", 66.9},
	{"H200", 66.9},
	{"GH200", 66.9},
	{"A100", 19.5},
	{"A10G", 31.2},
	{"A10", 31.2},
	{"L40S", 91.6},
	{"L40", 90.5},
	{"L4", 30.3},
	{"V100", 15.7},
	{"T4", 8.1},
	{"RTX 4090", 82.6},
	{"RTX A6000", 38.7},
}

// peakFP32 returns the FP32 peak of the GPU nvidia-smi calls name, and
// the table entry that matched.
func peakFP32(name string) (tflops float64, entry string, ok bool) {
	for _, e := range peakTable {
		if strings.Contains(name, e.match) {
			return e.tflops, e.match, true
		}
	}
	return 0, "", false
}

// encoderStepFLOPs is a BERT-shaped training step's model FLOPs: the
// matrix products of the forward pass (projections, feed-forward, the two
// attention products, the regression head ignored) times 3 for forward and
// backward, over b sequences of t tokens.
func encoderStepFLOPs(layers, d, ff, b, t int) float64 {
	perToken := float64(layers) * (8*float64(d)*float64(d) + 4*float64(d)*float64(ff) + 4*float64(t)*float64(d))
	return 3 * perToken * float64(b*t)
}

// t5StepFLOPs is a T5-shaped training step's model FLOPs (3x the forward
// products): encoder over s source tokens, decoder over t target tokens
// with self- and cross-attention and the vocabulary projection.
func t5StepFLOPs(layers, d, ff, vocab, b, s, t int) float64 {
	D, F, S, T, V := float64(d), float64(ff), float64(s), float64(t), float64(vocab)
	L := float64(layers)
	enc := S * L * (8*D*D + 4*D*F + 4*S*D)
	dec := T*L*(8*D*D+4*D*D+4*D*F+4*T*D+4*S*D) + S*L*4*D*D + T*2*D*V
	return 3 * float64(b) * (enc + dec)
}

// gpt2TokenFLOPs is the forward FLOPs of one generated token with a
// context of ctx tokens: projections, feed-forward, attention over the
// cache and the vocabulary projection.
func gpt2TokenFLOPs(layers, d, vocab, ctx int) float64 {
	D, L := float64(d), float64(layers)
	return L*(8*D*D+16*D*D+4*float64(ctx)*D) + 2*D*float64(vocab)
}

// fraction formats achieved FLOP/s against the peak.
func fraction(flops, seconds, peakTFLOPS float64) string {
	if seconds <= 0 {
		return "n/a"
	}
	achieved := flops / seconds / 1e12
	if peakTFLOPS <= 0 {
		return fmt.Sprintf("%.2f TFLOP/s (peak unknown)", achieved)
	}
	return fmt.Sprintf("%.2f TFLOP/s = %.1f%% of FP32 peak %.1f", achieved, 100*achieved/peakTFLOPS, peakTFLOPS)
}
