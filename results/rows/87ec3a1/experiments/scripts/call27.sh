#!/bin/bash
# The merge of equal parts in the clusters (the tree as built into dist/, "a") against 742a196's
# kernels (dist/variant/base) and "a" with rsqrt.approx for the norms' 1/sqrt(var + eps)
# (dist/variant/ab): the GPU tests of ab; the lab's bench of the norms' cluster entries at their
# three shapes, alternating base, a, ab twice; the peers' rotation of the norms at the short rows
# and at 256x262144 (L2 dirty, compile), base, a, ab, twice. Also the GPU tests of "a" (dist/tests).
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
mkdir -p dist/variant/ab/tests && cp dist/tests/gpu dist/variant/ab/tests/gpu
LAB_REQUIRE_GPU=1 timeout 60 dist/variant/ab/tests/gpu gpu_rows:: --test-threads=1 > "$w/tests-ab.txt" 2>&1
echo "tests ab rc=$? t=$SECONDS" >> "$w/calls.log"
LAB_REQUIRE_GPU=1 timeout 60 dist/tests/gpu gpu_rows:: --test-threads=1 > "$w/tests-a.txt" 2>&1
echo "tests a rc=$? t=$SECONDS" >> "$w/calls.log"
rows=$(ls results/rows/742a196/rows-nvidia-*.json)
for v in base a ab base2 a2 ab2; do
  p=dist/ptx lab=dist/lab
  [[ $v == a || $v == a2 ]] || { p=dist/variant/${v%2}/ptx; lab=dist/variant/${v%2}/lab; }
  mkdir -p "$w/bench-$v"
  timeout 60 $lab bench --kernel layernorm_cluster,rmsnorm_cluster \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet --out "$w/bench-$v" \
    > "$w/bench-$v.txt" 2>&1
  echo "bench $v rc=$? t=$SECONDS" >> "$w/calls.log"
  timeout 70 python3 gpu/rows/peers.py --lab "$rows" --ptx $p --ops layernorm,rmsnorm \
    --shapes 65536x512,32768x1024,256x262144 --impls compile --reps 30 \
    --out "$w/peers-$v.json" > "$w/peers-$v.txt" 2> "$w/peers-$v.log"
  echo "peers $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call27.tgz . && mv /tmp/call27.tgz "$out/"; cat "$w/calls.log"
