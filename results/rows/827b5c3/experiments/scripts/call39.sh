#!/bin/bash
# LayerNorm's cluster with `b`'s loads further ahead, against f8b7c99 (dist/): A, the loads of
# `b`'s vector n issued at the output of vector n - 4 (f32) / n - 3 (bf16), the first ones
# before the first output (was n - 2 / n - 1), the two entries given `.maxnreg 64` (PTX edit);
# B, A with those loads not allocating in L1. Lab bench of the LayerNorm and RMSNorm clusters at
# the three cluster shapes, f32 and bf16, two rounds (the bench checks every output); ncu of
# layernorm_cluster_f32 at 256 x 262144 under A.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$w/gpu.txt"
for r in 1 2; do for v in base A B; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  mkdir -p "$w/bench-$v-$r"
  timeout 90 $lab bench --kernel rmsnorm_cluster,layernorm_cluster --backend llvm \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet \
    --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$SECONDS" >> "$w/calls.log"
done; done
for v in A; do
  timeout 120 dist/xtask profile --lab dist/variant/$v/lab --kernel layernorm_cluster_f32 \
    --backend llvm --rows 256 --cols 262144 --clock-control none \
    --output "$w/prof-$v" -q > "$w/profile-$v.txt" 2>&1
  echo "profile $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
find "$w" -name '*.ncu-rep' -delete
cd "$w" && tar czf /tmp/call39.tgz . && mv /tmp/call39.tgz "$out/"; cat "$w/calls.log"
