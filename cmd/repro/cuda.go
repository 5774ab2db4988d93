//go:build cuda

package main

// The CUDA backend registers itself with backend.ByName when linked; it is
// its own package because gorgonia.org/cu exits at init without a GPU, so
// only binaries built with -tags cuda may contain it.
import _ "repro/internal/tensor/backend/cuda"
