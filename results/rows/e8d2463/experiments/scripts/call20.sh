#!/bin/bash
# Where the Rust kernels' extra microsecond a launch goes: ncu's warp-state, scheduler, launch
# and occupancy sections over the peers' rotation (no cache control, clocks as they are) for
# LayerNorm f32 and RMSNorm bf16 at 65536x512, torch.compile's kernel and the Rust kernels of
# e8d2463 in the same process. The stall reasons that a start or a tail cost would show: no
# instruction (a cold instruction cache), long scoreboard (the first loads), barrier/membar.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; w=$(mktemp -d)
rows=$(ls results/rows/e8d2463/rows-nvidia-*.json)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for c in "layernorm f32" "rmsnorm bf16"; do
  set -- $c; n=$1-$2
  timeout 150 ncu --target-processes all --clock-control none --cache-control none \
    --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
    --section SpeedOfLight --launch-skip 40 --launch-count 40 --csv --page raw \
    python3 gpu/rows/peers.py --lab "$rows" --ptx dist/ptx --ops $1 --dtypes $2 --shapes 65536x512 --impls compile \
    --reps 20 --out "$w/$n-peers.json" > "$w/$n-ncu.csv" 2> "$w/$n.log"
  echo "$n rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call20.tgz . && mv /tmp/call20.tgz "$out/"; cat "$w/calls.log"
