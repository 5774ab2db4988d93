// Package cuda is repro's CUDA backend: cuBLAS sgemm through gorgonia.org/cu
// (v0.9.6), compiled only with the cuda build tag. Importing it registers
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
package cuda
