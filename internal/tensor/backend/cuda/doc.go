// Package cuda is repro's CUDA backend: cuBLAS sgemm through gorgonia.org/cu
// (v0.9.6) and the operators' other kernels (backend.Kernels: exact and tanh
// GELU, ReLU, layer and RMS norm, each forward and backward, the masked row
// softmax with or without a score bias, AdamW),
// compiled only with the cuda build tag. Importing it registers
// "cuda" (and "cuda:N") with backend.ByName; a binary that wants the backend
// imports it for effect in a file tagged cuda:
//
//	//go:build cuda
//	package main
//	import _ "repro/internal/tensor/backend/cuda"
//
// It is a package of its own, not a file of package backend, because
// gorgonia.org/cu's package init calls cuInit and exits the process when no
// GPU is present (and a binary linked against it needs libcuda.so.1 just to
// start): nothing that must run on a GPU-less machine may import it, tests of
// package backend included. For the same reason its tests carry a second tag,
// gpu; the cuda-tagged test in package backend looks for /dev/nvidia0 or
// nvidia-smi and either reports "skipped: no GPU" or runs them with
// -tags cuda,gpu.
//
// Threading: a CUDA context is current on one OS thread. One goroutine,
// locked to its thread for its whole life, creates the context and the cuBLAS
// handle and executes every call, which other goroutines send it over a
// channel and wait for; calls are therefore serialised per device.
//
// Memory: row-major operands are multiplied as their column-major
// transposes (C^T = op(B)^T op(A)^T), so no data is rearranged. Transient
// operands are copied into scratch device buffers drawn from free lists by
// power-of-two size class, reused call after call (a training step repeats
// the same shapes, so after the first step nothing is allocated). Long-lived
// operands (weights) can be made resident with Keep (backend.Resident):
// they are uploaded once and reused until Changed or Release. The limits of
// that cache: a slice is identified by its first element's address and its
// length, so a sub-slice of a kept slice is a different operand and is copied
// per call; the host copy must not change without a call to Changed, or the
// device computes with stale values; kept slices stay referenced (and
// allocated on the device) until Release or Close. C is always copied back to
// the host, because every other operator runs on the CPU.
//
// Results: cuBLAS in its default math mode (FP32, no TF32) agrees with the
// CPU backend to about 1e-6 relative; it is bit-reproducible run after run on
// one GPU model and toolkit, but its bits differ from the CPU backend's.
//
// Kernels: the non-GEMM kernels are C in ptx/kernels.h (the bodies, one
// function of the global thread index each: a thread per element for GELU
// and AdamW, a thread per row for layer norm and softmax; no shared memory,
// no synchronisation) and ptx/kernels.cu (the __global__ entry points).
// ptx/gen.sh compiles them with clang-14 -nocudainc -nocudalib
// -ffp-contract=off into sm_60 PTX, ptx/kernels.ptx, which package ptx embeds
// (no build tag) and start loads with cuModuleLoadData; the driver
// JIT-compiles it for the device. The PTX calls nothing (no libdevice: the
// kernels use their own expf and erff, as the Go operators do) and every
// float add and multiply in it carries .rn, so ptxas cannot fuse them.
// Each call copies its operands into scratch buffers, launches 256 threads
// per block and copies the results back; only AdamW reads a kept
// (Resident) copy, which it updates in place.
//
// The kernels mirror the Go operators' arithmetic operation by operation
// (float64 where Go uses float64, the same float32 constants, Go's min/max
// rules), so on the CPU they are bit-identical to them: package ptx/emu
// compiles kernels.h with gcc and loops the thread index, and tests compare
// every kernel with the operators' own code bit for bit, edge cases
// included (package tensor's kernelref_test.go; optim.AdamW in emu's). That holds for Go builds
// that do not fuse multiply-adds (amd64 below GOAMD64=v3); a Go build that
// fuses would differ from the kernels, not the other way round. Package
// ptx's tests check that kernels.ptx is generated from the current sources,
// has every entry with the parameter kinds the backend passes, and needs no
// external function.
//
// Not yet run on a GPU: the kernel launches (module loading, argument
// passing, grid sizes) and the GPU tests (tags cuda,gpu) comparing every
// kernel with its CPU emulation to 1e-4 relative; they log how many values
// differ in any bit, 0 expected, since the PTX's float32 and float64
// operations without .ftz are IEEE with subnormals, as the CPU's; and
// TestTrainingStepMatchesCPU, three steps of the conformance training run
// (backend/conformance) on the GPU against the CPU.
//
// The operators call the kernels when the current backend offers them
// (tensor.GELU, tensor.LayerNorm, the softmax inside tensor.Attention,
// optim.AdamW.Step); the CPU and OpenBLAS backends do not, so their
// numerics are the operators' own loops, unchanged. That dispatch is tested
// without a GPU: the emu tests run the conformance training run with the
// emulated kernels behind the same interface and get the CPU's bits.
//
// Weights stay on the device for a whole training run: the trainer
// (internal/trainer) keeps every parameter (backend.Resident) before its first
// step and releases them after the last; GEMMs read the kept copies, and
// the AdamW kernel updates a kept weight in place on the device and writes
// it back to the host, so no weight is uploaded again between steps.
//
// Device-resident training (device.go): Backend.Device is the GPU as a
// backend.Device, so that tensors whose leaves were placed there
// (tensor.Place) stay in GPU memory across operators, forward, backward and
// AdamW, with only the batch going up and the logged loss coming down
// (internal/tensor/device.go has the design; the operators with a device
// path are listed there). Its buffers come from the scratch free lists,
// zeroed; its kernels are the same PTX (device kernels for gather and
// scatter-add, elementwise arithmetic, bias rows, column sums, the
// counter-based PCG dropout mask, attention's visibility, score bias and
// softmax backward, mean pooling, MSE, L2 and RMS norms, tanh, block
// copies, sums, (log-)softmax rows and cross-entropy with Go's math.Exp
// and math.Log, T5's bucket bias, the clipping norm), checked bit for bit
// on the CPU by the emulated device (package emudev, "emu"), which runs the
// same training steps to the CPU's bits. The GEMMs are strided-batched
// cuBLAS calls (gemm.go, a cuBLAS handle of the backend's own:
// gorgonia.org/cu does not bind cublasSgemmStridedBatched): attention's
// (sequence, head) grid is one call per head or per sequence, whichever
// is fewer.
// Float64 sums the CPU runs in order (a loss over rows, the clipping norm)
// run in one GPU thread, in that order: exact, not fast. Not yet run on a
// GPU: scripts/gpu-check.sh runs TestDeviceKernelsMatchEmulation,
// TestDeviceStepsMatchCPU and TestDeviceContrastiveAndPaSeRMatchCPU and
// measures throughput.
//
// Decoding runs there too (device3.go: the one-query attention against a
// cache, cache row writes, T5's decoder bias, the token draw):
// generate.Generate keeps a session's caches and logits on the GPU and a
// step copies only token ids. Mixed precision (backend.Precision, a
// training stage's precision parameter) is Device.SetGemmPrecision: TF32
// through cublasGemmStridedBatchedEx with CUBLAS_COMPUTE_32F_FAST_TF32,
// BF16 with bfloat16 copies of the operands (the repro_to_bf16 kernel)
// and FP32 sums; the weights in device memory stay FP32. The trainer
// (internal/trainer) places a training stage's weights and AdamW moments
// on the device for the whole run (Backend.NewDevice: its own copy
// counter and precision) and logs what each update copies.
package cuda
