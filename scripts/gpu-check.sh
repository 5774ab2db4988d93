#!/bin/sh
# gpu-check.sh: the GPU check of issue 42, for a machine with an NVIDIA GPU
# (under 10 minutes on one H100/H200; each phase has its own time limit).
#
#   sh scripts/gpu-check.sh            (from anywhere; prints a report)
#
# 1. Finds the GPU (nvidia-smi -L). Without one it fails at once: one line
#    on stderr, exit 1.
# 2. Builds with the cuda tag: the CUDA backend's GPU tests
#    (go test -c -tags cuda,gpu ./internal/tensor/backend/cuda) and the
#    throughput program (go build -tags cuda ./scripts/gpubench). Headers:
#    $CGO_CFLAGS/$CGO_LDFLAGS if set, else a CUDA toolkit under
#    $CUDA_HOME (default /usr/local/cuda), else .ci/cuda-headers.sh (Debian's
#    CUDA 11.8 headers and stubs; offline it reuses a carried .cuda/). A
#    binary linked against those stubs needs libcublas.so.11 at run time.
# 3. Runs the GPU tests: every kernel against its CPU emulation (the
#    copy-path Kernels and the device kernels), cuBLAS against the CPU,
#    three conformance training steps against the CPU on the copy path
#    (TestTrainingStepMatchesCPU) and on the device-resident path
#    (TestDeviceStepsMatchCPU, TestDeviceContrastiveAndPaSeRMatchCPU, which
#    also check the bytes copied per step).
# 4. Prints throughput: BERT-base-shaped and T5-base-shaped training steps
#    (device-resident) and GPT-2-small-shaped generation tokens/s (device-
#    resident: caches, logits and the draw on the GPU), each with the
#    fraction of the GPU's FP32 peak (the table in scripts/gpubench/peak.go).
#
# Ends with one line, "gpu-check: PASSED" (exit 0) or "gpu-check: FAILED:
# <what>" (exit 1). GPU_CHECK_STEPS sets the training steps timed (default
# 5); GPU_CHECK_KEEP=1 keeps the build directory.
set -eu

fail() {
	echo "gpu-check: FAILED: $*" >&2
	exit 1
}

# No external command before the GPU check: the failure must be clear even
# on a bare machine.
case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
cd "$here/.." || fail "cannot enter the repository root"

command -v nvidia-smi >/dev/null 2>&1 || fail "no NVIDIA GPU: nvidia-smi is not installed"
gpus=$(nvidia-smi -L 2>/dev/null) || fail "no NVIDIA GPU: nvidia-smi -L failed (no driver or no device)"
case $gpus in
*GPU*) ;;
*) fail "no NVIDIA GPU: nvidia-smi -L lists none" ;;
esac

command -v go >/dev/null 2>&1 || fail "the go command is not installed"
command -v timeout >/dev/null 2>&1 || fail "timeout (coreutils) is not installed"

echo "gpu-check: $(echo "$gpus" | head -n 1)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null | sed 's/^/gpu-check: /' || true

if [ -z "${CGO_CFLAGS:-}" ]; then
	cuda_home=${CUDA_HOME:-/usr/local/cuda}
	if [ -f "$cuda_home/include/cuda.h" ] && [ -f "$cuda_home/include/cublas_v2.h" ]; then
		export CGO_CFLAGS="-I$cuda_home/include"
		export CGO_LDFLAGS="-L$cuda_home/lib64 -L$cuda_home/lib64/stubs"
		echo "gpu-check: building against the CUDA toolkit in $cuda_home"
	else
		env=$(sh .ci/cuda-headers.sh 2>/dev/null) || fail "no CUDA headers: no toolkit in $cuda_home and .ci/cuda-headers.sh failed (offline without a carried .cuda/?)"
		eval "$env"
		echo "gpu-check: building against Debian's CUDA 11.8 headers (.ci/cuda-headers.sh): needs libcublas.so.11 at run time"
	fi
fi

out=$(mktemp -d)
if [ "${GPU_CHECK_KEEP:-0}" != 1 ]; then
	trap 'rm -rf "$out"' EXIT
fi

echo "gpu-check: building (-tags cuda)"
timeout 240 go test -c -tags cuda,gpu -o "$out/cuda.test" ./internal/tensor/backend/cuda >"$out/build.log" 2>&1 ||
	{ tail -n 20 "$out/build.log" >&2; fail "building the GPU tests (go test -c -tags cuda,gpu ./internal/tensor/backend/cuda)"; }
timeout 120 go build -tags cuda -o "$out/gpubench" ./scripts/gpubench >>"$out/build.log" 2>&1 ||
	{ tail -n 20 "$out/build.log" >&2; fail "building scripts/gpubench with -tags cuda"; }

echo "gpu-check: GPU tests (kernels against their emulation, cuBLAS and three training steps against the CPU)"
status=0
(cd internal/tensor/backend/cuda && timeout 240 "$out/cuda.test" -test.count=1 -test.v) >"$out/test.log" 2>&1 || status=$?
grep -E '^(=== RUN|--- |    |PASS|FAIL|ok)' "$out/test.log" | grep -v '^=== RUN' || true
if [ "$status" != 0 ]; then
	tail -n 5 "$out/test.log" >&2
	case $status in
	124) fail "the GPU tests ran past 240 s" ;;
	*) if grep -q 'error while loading shared libraries' "$out/test.log"; then
		fail "the GPU tests could not start: $(grep -m1 'error while loading' "$out/test.log")"
	fi
		fail "the GPU tests (exit $status; log above)" ;;
	esac
fi

echo "gpu-check: throughput"
status=0
timeout 240 "$out/gpubench" -steps "${GPU_CHECK_STEPS:-5}" >"$out/bench.log" 2>&1 || status=$?
sed 's/^/gpu-check: /' "$out/bench.log"
[ "$status" = 0 ] || fail "scripts/gpubench (exit $status$([ "$status" = 124 ] && echo ': ran past 240 s'))"
echo "gpu-check: PASSED"
