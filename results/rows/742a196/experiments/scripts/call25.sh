#!/bin/bash
# ncu (the full set, source-level stalls) of LayerNorm's and RMSNorm's clusters at 256 x 262144,
# f32 and bf16, rustc's kernels, through the lab's profile: the same placement and tail, RMSNorm
# at 0.93-0.95 x copy and LayerNorm at 0.83-0.87. Everything under one folder, packed.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for k in layernorm_cluster_f32 rmsnorm_cluster_f32 layernorm_cluster_bf16 rmsnorm_cluster_bf16; do
  timeout 120 dist/xtask profile --kernel $k --backend llvm --rows 256 --cols 262144 --source \
    --clock-control none --output "$w/prof-$k" -q > "$w/profile-$k.txt" 2>&1
  echo "profile $k rc=$? t=$SECONDS" >> "$w/calls.log"
done
find "$w" -name '*.ncu-rep' -delete
cd "$w" && tar czf /tmp/call25.tgz . && mv /tmp/call25.tgz "$out/"; cat "$w/calls.log"
