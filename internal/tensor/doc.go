// Package tensor holds repro's batched autograd operators: each operator
// is a spago ag.AutoGradFunction over row-major float32 matrices that hold
// a whole batch ([B*T, D] for token states, [B, D] for sentence vectors),
// started with ag.NewOperator(fn).Run(). spago's stock modules work one
// column vector per token and are far too slow for training; these
// operators do one sgemm per matrix product (through backend.Current(), so
// the same code runs on the pure-Go, OpenBLAS and CUDA backends) and plain
// loops for the rest. The exception is attention on the CPU backend, which
// fuses each (sequence, head) block's products, mask and softmax in cache
// tiles with the per-head products' bits (attention_fused.go).
//
// Determinism. spago's ag.Backward runs every operator's backward in its
// own goroutine and sums gradients in completion order, so when a tensor
// feeds three or more operators the sum's rounding differs run to run.
// Backward in this package walks the same graph sequentially in reverse
// creation order instead, so every gradient sum happens in one fixed
// order; inside an operator, work is split across goroutines only where
// each output element is computed by exactly one goroutine, and every
// reduction runs in a fixed order that does not depend on the number of
// goroutines. The result: the same configuration and seed give
// bit-identical losses and weights run after run, with parallelism on.
// ag.Backward still works on these graphs (it is correct, merely not
// bit-reproducible when a tensor has more than two consumers).
//
// Randomness (dropout) always comes from a *rand.Rand (math/rand/v2) that
// the caller owns, one per model, never a global generator.
//
// Device residency. Values can live in a device's memory instead of Go
// slices: leaves placed with Place, operators with a device path keeping
// their results there, every host<->device copy explicit and counted.
// device.go holds the design; operators without a device path fall back to
// the host, correctly, and the counter names them.
//
// Errors. Operator shape mismatches are programming errors and panic with
// a message naming the operator and the shapes; user input (token ids,
// lengths, configuration) is validated by the callers that receive it
// (internal/model/transformer) and reported as errors.
package tensor
