#!/bin/bash
# Any GPU: pair-check.sh (b304f94/experiments: the pair schedule's kernels checked, then one
# round of the lab's bench of the pair beside the clusters at the long rows); on an H200, a
# second round of that bench, the pair's kernels named last, so the two rounds take the
# kernels in opposite orders. About two minutes, three on an H200.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}
bash dist/exp/pair-check.sh
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
[[ $gpu == *H200* ]] || exit 0
w=$(mktemp -d)
timeout 90 dist/variant/pair/lab bench \
    --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster,softmax_pair,rmsnorm_pair,layernorm_pair \
    --backend llvm,nvvm --dtype f32,bf16 --shape 4096x32768,1024x131072,256x262144 --reps 20 \
    --quiet --out "$w/bench2" > "$w/bench2.txt" 2>&1
echo "bench2 rc=$?"
tar czf "$out/call1-bench2.tgz" -C "$w" .
