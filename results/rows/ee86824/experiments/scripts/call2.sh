#!/bin/bash
# call1.sh's part 3 again (its `lab run` had been given a --dtype it lacks), on base's build:
# ncu's per-instruction warp-stall samples of the LayerNorm f32 pair, both compilers, at
# 256 x 262144, with the clusters at once cut to 88 SMs' worth off the H200 (the sms variant).
cd "$(dirname "$0")/../../../../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu" | tee "$out/gpu.txt"
lab=dist/variant/sms/lab emulate=(env LAB_EMULATE_SMS=88)
[[ $gpu == *H200* ]] && lab=dist/lab emulate=()
w=$(mktemp -d)
"${emulate[@]}" timeout 200 ncu --clock-control none --section SourceCounters \
    --section WarpStateStats --import-source no --nvtx --nvtx-include kernel-lab@profile/ \
    -k regex:layernorm_pair -o "$w/pair" "$lab" run --kernel layernorm_pair_f32 --backend both \
    --rows 256 --cols 262144 > "$w/ncu.log" 2>&1
echo "ncu rc=$?"
ncu --import "$w/pair.ncu-rep" --page source --csv --print-source sass > "$w/pair-sass.csv" 2>&1
ncu --import "$w/pair.ncu-rep" --page raw --csv --print-units base > "$w/pair-raw.csv" 2>&1
gzip "$w"/*.csv && cp "$w"/*.csv.gz "$w/ncu.log" "$out/"
ls -la "$out"
