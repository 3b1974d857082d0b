#!/bin/bash
# The grid pair against the lab's cluster pair at the two longest shapes, in one call (about
# five minutes), from the repo root with dist/ carried, dist/variant/grid built here first:
#   cargo xtask dist && bash scripts/variant.sh grid \
#       results/rows/34015a3/experiments/scripts/grid-pair.diff
# 1. gridpair.cu (built there by nvcc): LayerNorm's pair with its halves' statistics met
#    through the L2 on every SM the row's parts divide, timed against its own D2D copy, each
#    configuration twice, and cut to the cluster pair's 112 SMs (7 groups) to price the
#    exchange alone;
# 2. the same schedule in the lab (grid-pair.diff: rows/group/pair.rs's exchange through global
#    memory, the cooperative launch): checked (lab run at the check shapes, memcheck and
#    synccheck), then the lab's bench of the pair kernels against dist/'s, two rounds
#    (gpu/rows/variants.sh; softmax's and RMSNorm's too, whose clusters the grid pair may
#    beat where their cluster pairs did not);
# 3. gridpair.cu again.
# On a GPU other than the H200 it runs all the same, and gpu.txt says which GPU it was.
# Everything lands in $OUT/call1.tgz and $OUT/variants-call1.tgz.
cd "$(dirname "$0")/../../../../.." || exit
set -u
out=${OUT:-/tmp/out}
w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$w/gpu.txt"
exp=results/rows/34015a3/experiments/scripts
if nvcc -O3 -std=c++17 -arch=sm_90 -I gpu -Xptxas -v -o "$w/gridpair" "$exp/gridpair.cu" \
    > "$w/gridpair-build.txt" 2>&1; then
    timeout 240 "$w/gridpair" 20 > "$w/gridpair-1.txt" 2>&1
    echo "gridpair round 1 rc=$?"
else
    tail -5 "$w/gridpair-build.txt"
fi
tar czf "$out/call1.tgz" -C "$w" .
bash gpu/rows/variants.sh --kernel layernorm_pair,softmax_pair,rmsnorm_pair \
    --shape 1024x131072,256x262144 \
    --check 3x262144,5x131072,7x32768,3x8193,2x1000,1x1 --sanitize memcheck,synccheck \
    --tag call1 grid | tail -20
if [[ -x $w/gridpair ]]; then
    timeout 240 "$w/gridpair" 20 > "$w/gridpair-2.txt" 2>&1
    echo "gridpair round 2 rc=$?"
    grep -h "^summary\|^copy\|^#\|NOT\|skip" "$w"/gridpair-[12].txt
fi
rm -f "$w/gridpair"
tar czf "$out/call1.tgz" -C "$w" .
