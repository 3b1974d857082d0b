#!/bin/bash
# ncu (the full set, source-level stalls) of LayerNorm's f32 cluster, 742a196's kernels
# (dist/variant/base/lab) and 87ec3a1's (dist/lab), at 4096 x 32768 (clusters of 2, where the
# merge of equal parts lost 1-2 %) and 256 x 262144 (clusters of 16, where it gained 2 %),
# through the lab's profile. Everything under one folder, packed.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for shape in 4096x32768 256x262144; do
  for v in base a; do
    lab=dist/lab; [[ $v == a ]] || lab=dist/variant/$v/lab
    timeout 120 dist/xtask profile --lab $lab --kernel layernorm_cluster_f32 --backend llvm \
      --rows ${shape%x*} --cols ${shape#*x} --source --clock-control none \
      --output "$w/prof-$v-$shape" -q > "$w/profile-$v-$shape.txt" 2>&1
    echo "profile $v $shape rc=$? t=$SECONDS" >> "$w/calls.log"
  done
done
find "$w" -name '*.ncu-rep' -delete
cd "$w" && tar czf /tmp/call30.tgz . && mv /tmp/call30.tgz "$out/"; cat "$w/calls.log"
