#!/bin/bash
# 89cf827 (dist/) against dist/variant/t1024 (the same tree with CLUSTER_THREADS 1024: f32
# clusters of half the blocks, one block of 1024 an SM; LayerNorm's bounds .maxntid 1024,
# .minnctapersm 1): the lab's bench of the f32 cluster kernels at the three cluster shapes, two
# rounds, alternating; then the table of record at 89cf827 (results/rows/e8d2463/record.sh).
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$w/gpu.txt"
for r in 1 2; do for v in new t1024; do
  lab=dist/lab; [[ $v == t1024 ]] && lab=dist/variant/t1024/lab
  mkdir -p "$w/bench-$v-$r"
  timeout 90 $lab bench --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster --backend llvm \
    --shape 4096x32768,1024x131072,256x262144 --dtype f32 --reps 20 --quiet \
    --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$SECONDS" >> "$w/calls.log"
done; done
cd "$w" && tar czf /tmp/call41-bench.tgz . && mv /tmp/call41-bench.tgz "$out/"; cd - > /dev/null
OUT=$out bash results/rows/e8d2463/record.sh > "$out/record.txt" 2>&1
echo "record rc=$? t=$SECONDS" >> "$w/calls.log"; cp "$w/calls.log" "$out/"; cat "$w/calls.log"
