#!/usr/bin/env bash
# Runs every experiment in the mini profile (the baselines file has no
# training and runs as is), then checks the results against results/.
# Used by `make test`; a fresh cache is used unless REPRO_CACHE is set.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${REPRO_DATA_DIR:?set REPRO_DATA_DIR to the data directory (../shared/data)}"
export REPRO_CACHE="${REPRO_CACHE:-$(mktemp -d)/cache}"
echo "experiments: cache $REPRO_CACHE"
./repro validate experiments/*.hcl

./repro run experiments/baselines.hcl --profile mini
mini=(experiments/baselines.hcl)
for f in experiments/simcse.hcl experiments/paser.hcl; do
  if [ -f "$f" ]; then
    ./repro run "$f" --profile mini
    mini+=("$f")
  fi
done
./repro check "${mini[@]}" --profile mini
