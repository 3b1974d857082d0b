#!/bin/bash
# again (again-seat-after-merge.diff: the pair's block reads its cluster rank and thread index
# from the special registers again after the merge, where rustc's pair spilled what it held:
# ncu of call 2 charged the spill's reloads ~1,000 of rustc's 14,400 stall samples) against
# base, on whichever GPU comes, about five minutes:
# 1. checked (lab run at the pair's shapes, the sanitizer's three tools), then the lab's bench
#    of the pair kernels and LayerNorm's cluster at the three long shapes, both types, two
#    rounds (gpu/rows/variants.sh);
# 2. on a GPU other than the H200: LayerNorm's pair and cluster at the two longest shapes with
#    the clusters at once cut to 88 SMs' worth (sms's lab, LAB_EMULATE_SMS=88), base and again.
cd "$(dirname "$0")/../../../../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu" | tee "$out/gpu.txt"
bash gpu/rows/variants.sh --kernel softmax_pair,rmsnorm_pair,layernorm_pair,layernorm_cluster \
    --shape 4096x32768,1024x131072,256x262144 \
    --check 3x262144,5x131072,7x32768,3x8193,2x1000,1x1 \
    --sanitize racecheck,synccheck,memcheck --tag call3 again
if [[ $gpu != *H200* ]]; then
    mkdir -p dist/variant/smsagain
    cp dist/variant/sms/lab dist/variant/smsagain/ && cp -r dist/variant/again/ptx dist/variant/smsagain/
    cp dist/variant/again/MANIFEST.txt dist/variant/smsagain/
    LAB_EMULATE_SMS=88 bash gpu/rows/variants.sh --kernel layernorm_pair,layernorm_cluster \
        --shape 1024x131072,256x262144 --tag call3-e88 sms smsagain
fi
