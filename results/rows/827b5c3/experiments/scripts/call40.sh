#!/bin/bash
# c324801 (dist/) against f8b7c99 (dist/variant/base): the lab's bench of every cluster kernel
# at the three cluster shapes, f32 and bf16, two rounds, alternating (the bench checks every
# output); then the table of record at c324801 (results/rows/e8d2463/record.sh).
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$w/gpu.txt"
for r in 1 2; do for v in base new; do
  lab=dist/lab; [[ $v == base ]] && lab=dist/variant/base/lab
  mkdir -p "$w/bench-$v-$r"
  timeout 90 $lab bench --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster --backend llvm \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet \
    --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$SECONDS" >> "$w/calls.log"
done; done
cd "$w" && tar czf /tmp/call40-bench.tgz . && mv /tmp/call40-bench.tgz "$out/"; cd - > /dev/null
OUT=$out bash results/rows/e8d2463/record.sh > "$out/record.txt" 2>&1
echo "record rc=$? t=$SECONDS" >> "$w/calls.log"; cp "$w/calls.log" "$out/"; cat "$w/calls.log"
