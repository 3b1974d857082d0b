#!/bin/bash
# 1. The block kernels at 32768 x 1024 f32 and 16384 x 4096 (both types) launched with 2 and 4
#    times the threads a row (dist/exp/rows-threads-x2.json, -x4.json: 742a196's rows file with
#    those launches' threads multiplied, up to 1024; the kernel then holds fewer vectors a
#    thread), against the launch as built, in the peers' rotation (L2 dirty, compile, liger,
#    triton), alternating, twice.
# 2. The cluster's last turn: the clusters at rows that fill their last turn and rows that
#    leave it nearly empty (4096 rows of 32768 on 132 clusters of 2 is 31 turns and 4 rows;
#    256 rows of 262144 on 14 clusters of 16 is 18 turns and 4 rows), the lab's bench, twice.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
base=$(ls results/rows/742a196/rows-nvidia-*.json)
for v in base x2 x4 base2 x22 x42; do
  rows=$base; [[ $v == base* ]] || rows=dist/exp/rows-threads-${v:0:2}.json
  OUT=$w/peers-$v timeout 100 bash gpu/rows/peers.sh --lab "$rows" --ptx dist/ptx \
    --ops softmax,layernorm,rmsnorm --shapes 32768x1024,16384x4096 --impls compile,liger,triton \
    --reps 30 > /dev/null 2>&1
  echo "peers $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
for round in 1 2; do
  mkdir -p "$w/tail-$round"
  timeout 90 dist/lab bench --kernel rmsnorm_cluster,layernorm_cluster,softmax_cluster \
    --shape 3960x32768,4096x32768,4224x32768,224x262144,252x262144,256x262144 --reps 20 --quiet \
    --out "$w/tail-$round" > "$w/tail-$round.txt" 2>&1
  echo "tail $round rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call24.tgz . && mv /tmp/call24.tgz "$out/"; cat "$w/calls.log"
