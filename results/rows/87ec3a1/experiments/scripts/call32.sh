#!/bin/bash
# rustc's block kernels loading the row in one straight run (clamped addresses, as the clusters
# load: dist/variant/onerun, block-one-run.diff) against 87ec3a1 (dist/): the GPU tests of onerun;
# then, alternating twice, the lab's bench of the block entries and the peers' rotation of
# RMSNorm and LayerNorm (L2 dirty, torch.compile and Triton) at the shapes the blocks serve.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
LAB_REQUIRE_GPU=1 timeout 60 dist/variant/onerun/tests/gpu gpu_rows:: --test-threads=1 > "$w/tests-onerun.txt" 2>&1
echo "tests onerun rc=$? t=$SECONDS" >> "$w/calls.log"
rows=$(ls results/rows/87ec3a1/rows-nvidia-*.json)
for v in base onerun base2 onerun2; do
  p=dist/ptx lab=dist/lab
  [[ $v == onerun* ]] && { p=dist/variant/onerun/ptx; lab=dist/variant/onerun/lab; }
  mkdir -p "$w/bench-$v"
  timeout 50 $lab bench --kernel rmsnorm_block,layernorm_block,softmax_block --backend llvm \
    --shape 32768x1024,16384x4096,8192x8192,4096x32768 --reps 20 --quiet --out "$w/bench-$v" \
    > "$w/bench-$v.txt" 2>&1
  echo "bench $v rc=$? t=$SECONDS" >> "$w/calls.log"
  timeout 60 python3 gpu/rows/peers.py --lab "$rows" --ptx $p --ops rmsnorm,layernorm \
    --shapes 32768x1024,16384x4096,8192x8192 --impls compile,triton --reps 30 \
    --out "$w/peers-$v.json" > "$w/peers-$v.txt" 2> "$w/peers-$v.log"
  echo "peers $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call32.tgz . && mv /tmp/call32.tgz "$out/"; cat "$w/calls.log"
