#!/bin/bash
# The block kernels with their weights loaded with the row, as the warp's (53fb56a), on
# 742a196's dist/: dist/variant/lb LayerNorm's block kernels (64 registers: two blocks of 512
# an SM still), dist/variant/wb LayerNorm's and RMSNorm's (RMSNorm's 32 -> 48 registers: one
# block of 1024 an SM, not two). Alternating, twice: the lab's bench of the block entries at
# the shapes they serve, and the peers' rotation (L2 dirty, compile and triton) of the norms
# at those shapes.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
rows=$(ls results/rows/742a196/rows-nvidia-*.json)
for v in base lb wb base2 lb2 wb2; do
  p=dist/ptx lab=dist/lab
  [[ $v == base* ]] || { p=dist/variant/${v%2}/ptx; lab=dist/variant/${v%2}/lab; }
  mkdir -p "$w/bench-$v"
  timeout 60 $lab bench --kernel layernorm_block,rmsnorm_block --shape 32768x1024,16384x4096,8192x8192,4096x32768 \
    --reps 20 --quiet --out "$w/bench-$v" > "$w/bench-$v.txt" 2>&1
  echo "bench $v rc=$? t=$SECONDS" >> "$w/calls.log"
  timeout 100 python3 gpu/rows/peers.py --lab "$rows" --ptx $p --ops layernorm,rmsnorm \
    --shapes 32768x1024,16384x4096,8192x8192,4096x32768 --impls compile,triton --reps 30 \
    --out "$w/peers-$v.json" > "$w/peers-$v.txt" 2> "$w/peers-$v.log"
  echo "peers $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call23.tgz . && mv /tmp/call23.tgz "$out/"; cat "$w/calls.log"
