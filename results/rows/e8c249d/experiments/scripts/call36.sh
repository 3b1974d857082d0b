#!/bin/bash
# LayerNorm's cluster keeping 5 (dist/variant/k5) or 4 (k4) of each thread's 8 vectors of `b`
# in shared memory instead of 3 (e8c249d, dist/): the GPU tests of k5, then the lab's bench of
# LayerNorm's clusters at the three cluster shapes, alternating twice; then the clusters of 2
# (4096 x 32768) under the default placement and under load balancing (dist/variant/pol with
# e8c249d's PTX), alternating twice.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
LAB_REQUIRE_GPU=1 timeout 90 dist/variant/k5/tests/gpu gpu_rows:: --test-threads=1 > "$w/tests-k5.txt" 2>&1
echo "tests k5 rc=$? t=$SECONDS" >> "$w/calls.log"
for v in base k5 k4 base2 k5-2 k4-2; do
  lab=dist/lab; [[ $v == k5* ]] && lab=dist/variant/k5/lab; [[ $v == k4* ]] && lab=dist/variant/k4/lab
  mkdir -p "$w/bench-$v"
  timeout 60 $lab bench --kernel layernorm_cluster --backend llvm \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet \
    --out "$w/bench-$v" > "$w/bench-$v.txt" 2>&1
  echo "bench $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
for round in 1 2; do
  for p in 0 2; do
    mkdir -p "$w/pol$p-$round"
    LAB_CLUSTER_POLICY=$p timeout 60 dist/variant/pol/lab bench \
      --kernel rmsnorm_cluster,layernorm_cluster --backend llvm \
      --shape 4096x32768 --reps 20 --quiet --out "$w/pol$p-$round" \
      > "$w/pol$p-$round.txt" 2>&1
    echo "policy $p round $round rc=$? t=$SECONDS" >> "$w/calls.log"
  done
done
cd "$w" && tar czf /tmp/call36.tgz . && mv /tmp/call36.tgz "$out/"; cat "$w/calls.log"
