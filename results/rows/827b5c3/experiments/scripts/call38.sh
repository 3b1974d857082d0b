#!/bin/bash
# Ablations of LayerNorm's cluster at f8b7c99 (dist/): nob, `b` past the kept vectors not loaded
# (the kept `w` in its place); merge1, the cluster merging the one-word mean (the thread's own m2
# scaled); both. Outputs are wrong by design (the variants' host reports the time anyway). Lab
# bench of the LayerNorm and RMSNorm clusters at 1024 x 131072 and 256 x 262144, two rounds;
# then ncu of layernorm_cluster_f32 at 256 x 262144, base and nob.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$w/gpu.txt"
for r in 1 2; do for v in base nob merge1 both; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  mkdir -p "$w/bench-$v-$r"
  timeout 90 $lab bench --kernel rmsnorm_cluster,layernorm_cluster --backend llvm \
    --shape 1024x131072,256x262144 --reps 20 --quiet \
    --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$SECONDS" >> "$w/calls.log"
done; done
for v in base nob; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  timeout 120 dist/xtask profile --lab $lab --kernel layernorm_cluster_f32 \
    --backend llvm --rows 256 --cols 262144 --clock-control none \
    --output "$w/prof-$v" -q > "$w/profile-$v.txt" 2>&1
  echo "profile $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
find "$w" -name '*.ncu-rep' -delete
cd "$w" && tar czf /tmp/call38.tgz . && mv /tmp/call38.tgz "$out/"; cat "$w/calls.log"
