#!/bin/bash
# (1) The tail: cluster kernels at row counts that fill their last round or not (rustc's);
# (2) LayerNorm's clusters with the first vector of b loaded before the cluster merge (bm)
# against the base, alternating, both compilers.
cd "$(dirname "$0")/../.."
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/gpu.txt"
timeout 120 dist/lab bench --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster \
  --backend llvm --shape 240x262144,255x262144,256x262144,270x262144,960x131072,1024x131072 \
  --reps 20 --quiet --out "$w/tail" > "$w/tail.txt" 2>&1
echo "tail rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
for r in 1 2; do for v in base bm; do
  [[ $r == 2 && $v == base ]] && continue
  lab=dist/lab; [[ $v == bm ]] && lab=dist/variant/bm/lab
  timeout 60 $lab bench --kernel layernorm_cluster --backend llvm,nvvm \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet --out "$w/bench-$v-$r" \
    > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
done; done
timeout 60 dist/lab bench --kernel layernorm_cluster --backend llvm,nvvm \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet --out "$w/bench-base-3" \
    > "$w/bench-base-3.txt" 2>&1
echo "bench base 3 rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
tar czf "$out/call1.tgz" -C "$w" . ; cat "$w/calls.log"
grep -h "cluster" "$w"/tail.txt | cut -c1-110
for f in "$w"/bench-*.txt; do echo "== $f"; grep -h "layernorm_cluster" "$f" | cut -c1-110; done
