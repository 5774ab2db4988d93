package main

import (
	"math"
	"strings"
	"testing"
)

func TestPeakFP32(t *testing.T) {
	for name, want := range map[string]float64{
		"NVIDIA H100 80GB HBM3": 66.9,
		"NVIDIA H100 PCIe":      51.2,
		"NVIDIA H200":           66.9,
		"NVIDIA A100-SXM4-80GB": 19.5,
		"Tesla T4":              8.1,
		"NVIDIA L4":             30.3,
		"NVIDIA L40S":           91.6,
	} {
		got, _, ok := peakFP32(name)
		if !ok || got != want {
			t.Errorf("peakFP32(%q) = %v, %v; want %v", name, got, ok, want)
		}
	}
	if _, _, ok := peakFP32("Some Future GPU"); ok {
		t.Error("an unknown GPU has a peak")
	}
}

// TestFLOPs checks the step counts against hand-computed values.
func TestFLOPs(t *testing.T) {
	// BERT-base, 32 x 128: per token 12*(8*768^2 + 4*768*3072 + 4*128*768)
	// = 12*(4718592 + 9437184 + 393216) = 174587904; x 4096 tokens x 3.
	if got, want := encoderStepFLOPs(12, 768, 3072, 32, 128), 3*174587904.0*4096; got != want {
		t.Errorf("encoderStepFLOPs = %v, want %v", got, want)
	}
	// T5-base, 32 x (128 -> 32), per sequence forward: encoder
	// 128*12*(8D^2+4DF) = 21.7G + attention 0.6G; decoder 32*12*(12D^2+4DF)
	// = 6.34G, cross keys/values 128*12*4D^2 = 3.6G, attention 0.19G,
	// vocabulary 32*2*768*32128 = 1.58G: 34.0G, x 32 x 3 = 3.27T.
	if got := t5StepFLOPs(12, 768, 3072, 32128, 32, 128, 32); math.Abs(got-3.27e12)/3.27e12 > 0.01 {
		t.Errorf("t5StepFLOPs = %.4g, want about 3.27e12", got)
	}
	if got := gpt2TokenFLOPs(12, 768, 50257, 64); math.Abs(got-2*124e6)/(2*124e6) > 0.1 {
		t.Errorf("gpt2TokenFLOPs = %.3g, want about 2 x 124M", got)
	}
	if s := fraction(66.9e12, 1, 66.9); !strings.Contains(s, "100.0%") {
		t.Errorf("fraction = %q", s)
	}
}
