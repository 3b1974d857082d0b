#!/bin/bash
# The DRAM side of the short-row gap: ncu over the peers' rotation (no cache control, so each
# launch meets the L2 the rotation leaves; clocks as they are), every dram__ metric, for
# LayerNorm f32 and RMSNorm bf16 at 65536x512: torch.compile's kernel and the Rust kernels of
# e8d2463 (the table of record's build) in the same process. Also the chip's list of dram__,
# fbpa__ and lts__ metrics, for the next question.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; w=$(mktemp -d)
rows=$(ls results/rows/e8d2463/rows-nvidia-*.json)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
ncu --query-metrics --chip gh100 > "$w/metrics-gh100.txt" 2>&1
for c in "layernorm f32" "rmsnorm bf16"; do
  set -- $c; n=$1-$2
  timeout 220 ncu --target-processes all --clock-control none --cache-control none --metrics 'regex:^dram__' \
    --launch-skip 40 --launch-count 60 --csv --page raw \
    python3 gpu/rows/peers.py --lab "$rows" --ptx dist/ptx --ops $1 --dtypes $2 --shapes 65536x512 --impls compile \
    --reps 20 --out "$w/$n-peers.json" > "$w/$n-ncu.csv" 2> "$w/$n.log"
  echo "$n rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call17.tgz . && mv /tmp/call17.tgz "$out/"; cat "$w/calls.log"
