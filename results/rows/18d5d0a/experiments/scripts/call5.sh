#!/bin/bash
# On an H200, call4.sh (tc and the pair). On any other GPU, the H200's bytes an SM emulated
# (sms-emulated-sms.diff, dist/variant/sms/lab): the row clusters at the two longest shapes,
# once with every cluster that fits (full), once with the clusters at once cut to what 88 SMs
# hold (e88: on the H100, whose D2D copy moves ~2.97 TB/s, 88 SMs at the copy's rate move ~34
# GB/s each, what the H200's ~4.1 TB/s asks of its 120 SMs in the clusters of 16); two rounds,
# full, e88, e88, full; gpu/rows/variants.py's table. About three minutes.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
[[ $gpu == *H200* ]] && exec bash dist/exp/call4.sh
w=$(mktemp -d) t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$w/gpu.txt"
i=0
for run in full e88 e88 full; do
    i=$((i + 1)); rnd=$(( (i + 1) / 2 ))
    sms=""; [[ $run == e88 ]] && sms=88
    LAB_EMULATE_SMS=$sms timeout 120 dist/variant/sms/lab bench \
        --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster,layernorm_pair \
        --backend llvm,nvvm --dtype f32,bf16 --shape 1024x131072,256x262144 --reps 20 --quiet \
        --out "$w/bench-$run-$rnd" > "$w/bench-$run-$rnd.txt" 2>&1
    echo "bench $run $rnd rc=$? t=$((SECONDS - t0))s" | tee -a "$w/steps.log"
    tar czf "$out/call5.tgz" -C "$w" .
done
python3 gpu/rows/variants.py "$w" --builds full,e88 | tee "$w/variants.txt"
tar czf "$out/call5.tgz" -C "$w" .
