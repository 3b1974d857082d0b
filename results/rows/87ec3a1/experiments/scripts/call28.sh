#!/bin/bash
# LayerNorm's cluster entries at their three shapes in the lab's bench, alternating three rounds
# of 742a196's kernels (dist/variant/base), 438040a's (dist/: the merge of equal parts, its
# general-path copy gone) and 438040a's with the equal merge in bf16 only (dist/variant/bf);
# then the table of record of 438040a (results/rows/e8d2463/record.sh: GPU tests, lab run,
# bench, sanitizer, peers), with .whl/ carried.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for r in 1 2 3; do
  for v in base a bf; do
    lab=dist/lab; [[ $v == a ]] || lab=dist/variant/$v/lab
    mkdir -p "$w/bench-$v$r"
    timeout 40 $lab bench --kernel layernorm_cluster --shape 4096x32768,1024x131072,256x262144 \
      --reps 20 --quiet --out "$w/bench-$v$r" > "$w/bench-$v$r.txt" 2>&1
    echo "bench $v$r rc=$? t=$SECONDS" >> "$w/calls.log"
  done
done
mkdir -p "$w/record"
OUT=$w/record timeout 330 bash results/rows/e8d2463/record.sh > "$w/record.txt" 2>&1
echo "record rc=$? t=$SECONDS" >> "$w/calls.log"
cd "$w" && tar czf /tmp/call28.tgz . && mv /tmp/call28.tgz "$out/"; cat "$w/calls.log"
