#!/bin/bash
# On an H200, the table of record (26eb88d's call4.sh, about nine minutes). On any other GPU,
# tc (tc-torch-compile-loads.diff: RMSNorm's block and wide rows loaded as torch.compile's
# kernel loads them at 4096 x 32768 f32), checked (lab run, the sanitizer's three tools), the
# lab's bench of RMSNorm's block and wide kernels against base, two rounds
# (gpu/rows/variants.sh), then RMSNorm f32 at 4096 x 32768 in the peers' rotation beside
# torch.compile and the plain Triton kernel, the lab's wide block: base, tc, tc, base
# (gpu/rows/rotation.sh). About four minutes.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
[[ $gpu == *H200* ]] && exec bash dist/exp/call4.sh
bash gpu/rows/variants.sh --kernel rmsnorm_wide,rmsnorm_block \
    --shape 4096x32768,8192x8192,16384x4096 \
    --check 3x32768,1x32768,5x16384,7x8192,3x8193,2x1000 \
    --sanitize racecheck,synccheck,memcheck --tag call3 tc
bash gpu/rows/rotation.sh --from "$out/variants-call3.tgz" --tag call3 tc -- \
    --lab-schedule wide --ops rmsnorm --dtypes f32 --shapes 4096x32768 --impls compile,triton
