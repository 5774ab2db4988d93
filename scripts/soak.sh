#!/usr/bin/env bash
# Soak test of the cache's crash safety: kill -9 a real `repro run` of
# experiments/baselines.hcl (12 stages, real data) at random moments, N times
# (default 100), and after every kill require `repro cache verify` to pass.
# Every 5 kills the run is completed and checked against the recorded
# baseline (results/baselines.ci.json: the values must be exact), then a
# fresh cache starts, so kills keep landing in every phase of a cold run.
#
#   REPRO_DATA_DIR=../shared/data bash scripts/soak.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
: "${REPRO_DATA_DIR:?set REPRO_DATA_DIR to the data directory (../shared/data)}"
n="${1:-100}"
export CI=true
go build -o repro ./cmd/repro
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
file=experiments/baselines.hcl

t0=$(date +%s%N)
./repro run "$file" --profile ci --cache-dir "$work/cold" >/dev/null
cold=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
echo "soak: a cold run takes ${cold}s; $n kills at uniformly random moments within it"

kills=0 midrun=0 completes=0 verified=0
cache="$work/c0"
start=$(date +%s)
for i in $(seq 1 "$n"); do
  ./repro run "$file" --profile ci --cache-dir "$cache" >"$work/out" 2>&1 &
  pid=$!
  sleep "$(awk -v c="$cold" -v r="$RANDOM" 'BEGIN { printf "%.3f", c * r / 32768 }')"
  if kill -9 "$pid" 2>/dev/null; then midrun=$((midrun + 1)); fi
  wait "$pid" 2>/dev/null || true
  kills=$((kills + 1))
  if ! ./repro cache verify --cache-dir "$cache" >"$work/verify" 2>&1; then
    echo "soak: FAILED after kill $i: cache verify:"; cat "$work/verify"; cat "$work/out"; exit 1
  fi
  verified=$((verified + 1))
  if (( i % 5 == 0 )); then
    ./repro run "$file" --profile ci --cache-dir "$cache" >"$work/out" 2>&1 || { echo "soak: FAILED: completing run after kill $i"; cat "$work/out"; exit 1; }
    ./repro check "$file" --profile ci --cache-dir "$cache" >"$work/check" 2>&1 || { echo "soak: FAILED: results differ from the baseline after kill $i"; cat "$work/check"; exit 1; }
    completes=$((completes + 1))
    cache="$work/c$i"
  fi
done
echo "soak: $kills kill -9 ($midrun while the run was still going), $verified clean verifies, $completes completions checked against results/baselines.ci.json, in $(( $(date +%s) - start ))s"
