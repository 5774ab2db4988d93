package main

// The emulated device backend ("emu": internal/tensor/backend/emudev)
// registers itself with backend.ByName when linked. It needs no GPU and no
// build tag: it runs the CUDA kernels' C bodies on the CPU and counts the
// host<->device copies the CUDA backend would make.
import _ "repro/internal/tensor/backend/emudev"
