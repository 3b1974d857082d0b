#!/bin/bash
# fma (fma-layernorm-out.diff: LayerNorm's `· w + b` by FMA on rustc's backend, as rust-cuda's
# compiler already fuses it) against base, on whichever GPU comes, about five minutes:
# 1. checked (lab run at every schedule's shapes, the sanitizer's three tools), then the lab's
#    bench of every LayerNorm f32 schedule at the seven bench shapes, two rounds
#    (gpu/rows/variants.sh);
# 2. on a GPU other than the H200: the pair and the cluster at the two longest shapes with the
#    clusters at once cut to 88 SMs' worth (the sms variant's lab, LAB_EMULATE_SMS=88: the
#    H200's demand an SM, 18d5d0a/experiments section 2), base and fma, two rounds;
# 3. ncu's per-instruction warp-stall samples of the LayerNorm f32 pair, both compilers, fma's
#    build, at 256 x 262144 (emulated as in 2 off the H200), as CSV. (As run, with a --dtype
#    `lab run` lacks: nothing profiled; call2.sh is this part again.)
cd "$(dirname "$0")/../../../../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu" | tee "$out/gpu.txt"
ln=layernorm_narrow,layernorm_warp,layernorm_block,layernorm_wide,layernorm_cluster,layernorm_pair
bash gpu/rows/variants.sh --kernel "$ln" --dtype f32 \
    --shape 65536x512,32768x1024,16384x4096,8192x8192,4096x32768,1024x131072,256x262144 \
    --check 3x262144,5x131072,7x32768,3x8193,5x4096,9x512,2x1000,1x1 \
    --sanitize racecheck,synccheck,memcheck --tag call1 fma
lab=dist/variant/sms/lab emulate=()
if [[ $gpu != *H200* ]]; then
    mkdir -p dist/variant/smsfma
    cp dist/variant/sms/lab dist/variant/smsfma/ && cp -r dist/variant/fma/ptx dist/variant/smsfma/
    cp dist/variant/fma/MANIFEST.txt dist/variant/smsfma/
    LAB_EMULATE_SMS=88 bash gpu/rows/variants.sh --kernel layernorm_pair,layernorm_cluster \
        --dtype f32 --shape 1024x131072,256x262144 --tag call1-e88 sms smsfma
    lab=dist/variant/smsfma/lab emulate=(env LAB_EMULATE_SMS=88)
else
    lab=dist/variant/fma/lab
fi
w=$(mktemp -d)
"${emulate[@]}" timeout 200 ncu --clock-control none --section SourceCounters \
    --section WarpStateStats --import-source no --nvtx --nvtx-include kernel-lab@profile/ \
    -k regex:layernorm_pair -o "$w/pair" "$lab" run --kernel layernorm_pair --backend both \
    --dtype f32 --rows 256 --cols 262144 > "$w/ncu.log" 2>&1
echo "ncu rc=$?"
ncu --import "$w/pair.ncu-rep" --page source --csv --print-source sass > "$w/pair-sass.csv" 2>&1
ncu --import "$w/pair.ncu-rep" --page raw --csv --print-units base > "$w/pair-raw.csv" 2>&1
gzip "$w"/*.csv && cp "$w"/*.csv.gz "$w/ncu.log" "$out/"
