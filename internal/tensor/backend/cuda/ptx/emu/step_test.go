package emu

import (
	"math"
	"testing"

	"repro/internal/model/conformance"
	"repro/internal/tensor/backend"
)

// kernelBackend is the CPU backend plus the emulated kernels: the operators
// take their backend.Kernels path (the one the CUDA backend drives) with
// every kernel computed by the C source the GPU runs.
type kernelBackend struct {
	backend.Backend
	Kernels
}

func (kernelBackend) Name() string { return "cpu+emulated kernels" }

// TestTrainingStepThroughKernels: three training steps with the operators
// dispatching GELU, layer norm, the attention softmax and AdamW to the
// emulated kernels give the same bits as the operators' own loops. With
// the kernel tests of this package, this leaves the GPU only the launch
// and the copies to get right.
func TestTrainingStepThroughKernels(t *testing.T) {
	needUnfused(t)
	defer backend.Use(backend.Current())
	backend.Use(backend.CPU())
	wantL, wantW, err := conformance.TrainSteps(3)
	if err != nil {
		t.Fatal(err)
	}
	backend.Use(kernelBackend{Backend: backend.CPU()})
	if _, ok := backend.KernelsOf(backend.Current()); !ok {
		t.Fatal("the test backend does not offer its kernels")
	}
	gotL, gotW, err := conformance.TrainSteps(3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range wantL {
		if math.Float32bits(gotL[i]) != math.Float32bits(wantL[i]) {
			t.Errorf("step %d: loss %v through the kernels, %v on the CPU", i, gotL[i], wantL[i])
		}
	}
	if wantL[0] == wantL[len(wantL)-1] || math.IsNaN(float64(wantL[0])) {
		t.Fatalf("the model did not train: losses %v", wantL)
	}
	for i := range wantW {
		for j := range wantW[i] {
			if math.Float32bits(gotW[i][j]) != math.Float32bits(wantW[i][j]) {
				t.Fatalf("parameter %d element %d: %v through the kernels, %v on the CPU", i, j, gotW[i][j], wantW[i][j])
			}
		}
	}
}
