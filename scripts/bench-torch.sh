#!/usr/bin/env bash
# Issue 38's speed comparison: each PyTorch anchor, then repro's benchmark of
# the same step, for the reference encoder step, T5-small's training step
# and the causal-LM step; with BASE=<another checkout> also that checkout's
# benchmark after PyTorch's, so a change is timed against its parent in the
# same round. Run it on a machine with nothing else running, a few rounds
# (the host's speed drifts: compare within a round). Needs Debian's
# python3-torch (/usr/bin/python3) and ../shared/bench beside the clone.
#
#   ROUNDS=3 BASE=/path/to/parent-checkout bash scripts/bench-torch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
now=$(pwd)
shared=$(cd .. && pwd)/shared/bench
py=/usr/bin/python3
bench() { # dir label package pattern steps
	(cd "$1" && go test -run - -bench "$4\$" -benchtime "$5x" "./$3" 2>&1 | grep '^Benchmark' | sed "s/^/$2 /")
}
for r in $(seq "${ROUNDS:-1}"); do
	echo "## round $r $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
	$py "$shared/torch_encoder_step.py" 2 2>&1 | tail -1
	[ -n "${BASE:-}" ] && bench "$BASE" BASE internal/model/transformer SimCSEStep 6
	bench "$now" NOW internal/model/transformer SimCSEStep 6
	$py bench/torch_t5.py step 2 2>&1 | tail -1
	[ -n "${BASE:-}" ] && bench "$BASE" BASE internal/model/t5 TrainStep 4
	bench "$now" NOW internal/model/t5 TrainStep 4
	$py bench/torch_gpt2_step.py 2 2>&1 | tail -1
	[ -n "${BASE:-}" ] && bench "$BASE" BASE internal/model/gpt2 LMStep 4
	bench "$now" NOW internal/model/gpt2 LMStep 4
done
