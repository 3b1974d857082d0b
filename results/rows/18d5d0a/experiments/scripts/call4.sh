#!/bin/bash
# For an H200 (on any other GPU it says so and stops): the two questions the H100 cannot
# answer, in one call of about five minutes.
# 1. tc (tc-torch-compile-loads.diff; on the H100 it reads as torch.compile's own kernel):
#    the lab's bench of RMSNorm's wide block against base at 4096 x 32768, two rounds
#    (gpu/rows/variants.sh), then RMSNorm f32 there in the peers' rotation beside
#    torch.compile and the plain Triton kernel, the lab's wide block: base, tc, tc, base.
# 2. The pair beside the cluster at the three long shapes, all three ops, both types and
#    compilers: the lab's bench, two rounds, the kernels named in opposite orders.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
[[ $gpu == *H200* || ${ANY_GPU:-0} == 1 ]] || { echo "not an H200 ($gpu): nothing run"; exit 3; }
echo "$gpu" > "$out/gpu.txt"
bash gpu/rows/variants.sh --kernel rmsnorm_wide --shape 4096x32768 --check 3x32768 \
    --tag call4 tc
bash gpu/rows/rotation.sh --from "$out/variants-call4.tgz" --tag call4 tc -- \
    --lab-schedule wide --ops rmsnorm --dtypes f32 --shapes 4096x32768 --impls compile,triton
w=$(mktemp -d)
pair=softmax_pair,rmsnorm_pair,layernorm_pair
cluster=softmax_cluster,rmsnorm_cluster,layernorm_cluster
for round in "1 $pair,$cluster" "2 $cluster,$pair"; do
    set -- $round
    timeout 120 dist/lab bench --kernel "$2" --backend llvm,nvvm --dtype f32,bf16 \
        --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet --out "$w/pair-$1" \
        > "$w/pair-$1.txt" 2>&1
    echo "pair bench $1 rc=$?"
    tar czf "$out/call4-pair.tgz" -C "$w" .
done
