#!/bin/bash
# On an H200, call4.sh (tc and the pair). On any other GPU, each cluster kernel's own rate an
# SM at 256 x 262144, pressed harder than the H200 presses it: the clusters at once cut to
# what 64 and 48 SMs hold (e64, e48; sms-emulated-sms.diff, dist/variant/sms/lab), two rounds,
# e64, e48, e48, e64. About two minutes.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
[[ $gpu == *H200* ]] && exec bash dist/exp/call4.sh
w=$(mktemp -d) t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$w/gpu.txt"
i=0
for run in e64 e48 e48 e64; do
    i=$((i + 1)); rnd=$(( (i + 1) / 2 ))
    LAB_EMULATE_SMS=${run#e} timeout 120 dist/variant/sms/lab bench \
        --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster,layernorm_pair \
        --backend llvm,nvvm --dtype f32,bf16 --shape 256x262144 --reps 20 --quiet \
        --out "$w/bench-$run-$rnd" > "$w/bench-$run-$rnd.txt" 2>&1
    echo "bench $run $rnd rc=$? t=$((SECONDS - t0))s" | tee -a "$w/steps.log"
    tar czf "$out/call6.tgz" -C "$w" .
done
python3 gpu/rows/variants.py "$w" --builds e64,e48 | tee "$w/variants.txt"
tar czf "$out/call6.tgz" -C "$w" .
