#!/bin/bash
# L1 policies in the cluster kernels, against e8c249d (dist/): v1, the row's loads not
# allocating in L1 (`ld.global.nc.L1::no_allocate.L2::cache_hint`) and LayerNorm's loads of `b`
# ahead under `L1::evict_last`; v2, the loads of `b` alone. The lab's bench of the cluster
# kernels at the three cluster shapes, alternating twice (its bench checks every output).
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for v in base v1 v2 base2 v1-2 v2-2; do
  lab=dist/lab; [[ $v == v1* ]] && lab=dist/variant/v1/lab; [[ $v == v2* ]] && lab=dist/variant/v2/lab
  mkdir -p "$w/bench-$v"
  timeout 90 $lab bench --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster --backend llvm \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet \
    --out "$w/bench-$v" > "$w/bench-$v.txt" 2>&1
  echo "bench $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call37.tgz . && mv /tmp/call37.tgz "$out/"; cat "$w/calls.log"
