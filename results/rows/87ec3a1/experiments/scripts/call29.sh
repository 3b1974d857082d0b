#!/bin/bash
# The table of record of 87ec3a1 (results/rows/e8d2463/record.sh: GPU tests, lab run, bench,
# sanitizer, peers), with .whl/ carried; then LayerNorm's cluster entries in the lab's bench,
# 742a196's kernels (dist/variant/base) and 87ec3a1's alternating, twice.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
mkdir -p "$w/record"
OUT=$w/record timeout 330 bash results/rows/e8d2463/record.sh > "$w/record.txt" 2>&1
echo "record rc=$? t=$SECONDS" >> "$w/calls.log"
for r in 1 2; do
  for v in base a; do
    lab=dist/lab; [[ $v == a ]] || lab=dist/variant/$v/lab
    mkdir -p "$w/bench-$v$r"
    timeout 40 $lab bench --kernel layernorm_cluster --shape 4096x32768,1024x131072,256x262144 \
      --reps 20 --quiet --out "$w/bench-$v$r" > "$w/bench-$v$r.txt" 2>&1
    echo "bench $v$r rc=$? t=$SECONDS" >> "$w/calls.log"
  done
done
cd "$w" && tar czf /tmp/call29.tgz . && mv /tmp/call29.tgz "$out/"; cat "$w/calls.log"
