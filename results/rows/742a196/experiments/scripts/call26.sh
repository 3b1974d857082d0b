#!/bin/bash
# RMSNorm and LayerNorm f32 at 4096 x 32768 in clusters of 4 blocks of 256 (dist/exp/rows-c4.json,
# cluster4-rows.py) against the clusters of 2 blocks of 512 as built, in the peers' rotation
# (L2 dirty, compile and triton), alternating, three rounds.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
base=$(ls results/rows/742a196/rows-nvidia-*.json)
for v in base c4 base2 c42 base3 c43; do
  rows=$base; [[ $v == c4* ]] && rows=dist/exp/rows-c4.json
  timeout 80 python3 gpu/rows/peers.py --lab "$rows" --ptx dist/ptx --ops rmsnorm,layernorm \
    --dtypes f32 --shapes 4096x32768 --impls compile,triton --reps 30 \
    --out "$w/peers-$v.json" > "$w/peers-$v.txt" 2> "$w/peers-$v.log"
  echo "peers $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call26.tgz . && mv /tmp/call26.tgz "$out/"; cat "$w/calls.log"
