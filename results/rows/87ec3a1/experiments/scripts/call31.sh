#!/bin/bash
# The slots' merge in the butterfly's steps below the warps' power of two (dist/variant/below)
# against 87ec3a1 (dist/): the GPU tests of below; then, alternating twice, the lab's bench of
# the block entries at the shapes they serve and the peers' rotation there (L2 dirty,
# torch.compile and Triton) with 87ec3a1's rows file.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
LAB_REQUIRE_GPU=1 timeout 60 dist/variant/below/tests/gpu gpu_rows:: --test-threads=1 > "$w/tests-below.txt" 2>&1
echo "tests below rc=$? t=$SECONDS" >> "$w/calls.log"
rows=$(ls results/rows/87ec3a1/rows-nvidia-*.json)
for v in base below base2 below2; do
  p=dist/ptx lab=dist/lab
  [[ $v == below* ]] && { p=dist/variant/below/ptx; lab=dist/variant/below/lab; }
  mkdir -p "$w/bench-$v"
  timeout 60 $lab bench --kernel softmax_block,rmsnorm_block,layernorm_block \
    --shape 32768x1024,16384x4096,8192x8192 --reps 20 --quiet --out "$w/bench-$v" \
    > "$w/bench-$v.txt" 2>&1
  echo "bench $v rc=$? t=$SECONDS" >> "$w/calls.log"
  timeout 90 python3 gpu/rows/peers.py --lab "$rows" --ptx $p \
    --shapes 32768x1024,16384x4096,8192x8192 --impls compile,triton --reps 30 \
    --out "$w/peers-$v.json" > "$w/peers-$v.txt" 2> "$w/peers-$v.log"
  echo "peers $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call31.tgz . && mv /tmp/call31.tgz "$out/"; cat "$w/calls.log"
