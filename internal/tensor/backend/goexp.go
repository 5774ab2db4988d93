package backend

// GoExpFMA reports whether Go's math.Exp takes its fused multiply-add
// path on this machine: on amd64 exp_amd64.s uses VFMADD when the CPU has
// AVX and FMA, and its results then differ in the last bit from the
// unfused path's for some inputs. Device kernels that compute what the
// host's operators compute with math.Exp (cross-entropy, log-softmax,
// tanh: cuda/ptx/kernels.h's k_go_exp) take this as an argument.
var GoExpFMA = goExpFMA()
