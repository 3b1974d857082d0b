#!/bin/bash
# For an H200 (on any other GPU it says so and stops: both questions are the H200's):
# LayerNorm's lp2 (758aa93/experiments: two rows a block in its cluster, rustc's spills cut)
# and RMSNorm's rr (call2: the row read again from the L2 after the merge, under
# `evict_first`, as torch.compile's second pass reads it), each checked (lab run, the
# sanitizer's three tools), then the lab's bench of LayerNorm's clusters and RMSNorm's wide
# block against base, two rounds (gpu/rows/variants.sh); last, RMSNorm f32 at 4096 x 32768 in
# the peers' rotation beside torch.compile and the plain Triton kernel, the lab's wide block:
# base, rr, rr, base (gpu/rows/rotation.sh). About five minutes.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
[[ $gpu == *H200* || ${ANY_GPU:-0} == 1 ]] || { echo "not an H200 ($gpu): nothing run"; exit 3; }
bash gpu/rows/variants.sh --kernel layernorm_cluster,rmsnorm_wide \
    --shape 4096x32768,1024x131072,256x262144 \
    --check 3x131072,1x262144,256x262144,7x131072,5x32768,2x32768 \
    --sanitize racecheck,synccheck,memcheck --tag call3 lp2 rr
bash gpu/rows/rotation.sh --from "$out/variants-call3.tgz" --tag call3 rr -- \
    --lab-schedule wide --ops rmsnorm --dtypes f32 --shapes 4096x32768 --impls compile,triton
