#!/bin/bash
# The driver's cluster placement by cluster size (gpc.py, with and without the load-balancing
# scheduling policy); the lab's bench of every RMSNorm schedule, both compilers, 87ec3a1
# (dist/) against dist/variant/ab (the sum of squares by FMA), alternating twice; then the
# cluster kernels at the two longest shapes under the three cluster scheduling policies
# (dist/variant/pol: 87ec3a1's kernels, the lab's launch given LAB_CLUSTER_POLICY, a patch
# not kept), alternating twice.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
timeout 60 python3 dist/exp/gpc.py dist/ptx/llvm/gpu_kernels.ptx.gz > "$w/gpc.txt" 2>&1
echo "gpc rc=$? t=$SECONDS" >> "$w/calls.log"
k=rmsnorm_narrow,rmsnorm_warp,rmsnorm_block,rmsnorm_wide,rmsnorm_cluster
for v in base ab base2 ab2; do
  lab=dist/lab; [[ $v == ab* ]] && lab=dist/variant/ab/lab
  mkdir -p "$w/bench-$v"
  timeout 120 $lab bench --kernel $k --backend llvm,nvvm --reps 20 --quiet \
    --out "$w/bench-$v" > "$w/bench-$v.txt" 2>&1
  echo "bench $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
for round in 1 2; do
  for p in 0 1 2; do
    mkdir -p "$w/pol$p-$round"
    LAB_CLUSTER_POLICY=$p timeout 90 dist/variant/pol/lab bench \
      --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster --backend llvm \
      --shape 1024x131072,256x262144 --reps 20 --quiet --out "$w/pol$p-$round" \
      > "$w/pol$p-$round.txt" 2>&1
    echo "policy $p round $round rc=$? t=$SECONDS" >> "$w/calls.log"
  done
done
cd "$w" && tar czf /tmp/call34.tgz . && mv /tmp/call34.tgz "$out/"; cat "$w/calls.log"
