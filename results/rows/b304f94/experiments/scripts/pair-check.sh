#!/bin/bash
# The pair schedule's kernels (pair-schedule.diff, built by scripts/variant.sh pair) on any GPU:
# `lab run` of the three ops' pair kernels on both Rust compilers at one row (a cluster's second
# half idle), odd and even row counts, row lengths at and between the cluster sizes, every
# output against the CPU reference; racecheck, synccheck and memcheck at 3 x 131072; then the
# lab's bench of the pair kernels beside the clusters at the long rows (one round). About two
# minutes. Everything lands in $OUT/pair-check.tgz, packed again after each step.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
lab=dist/variant/pair/lab kernels=softmax_pair,rmsnorm_pair,layernorm_pair
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
log() { echo "$* t=$((SECONDS - t0))s" | tee -a "$w/steps.log"; tar czf "$out/pair-check.tgz" -C "$w" .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$w/gpu.txt"
for s in 1x262144 5x131072 4x32768 3x8193 2x1000 7x7; do
    timeout 60 "$lab" run --kernel "$kernels" --backend both --rows "${s%x*}" --cols "${s#*x}" \
        >> "$w/run.txt" 2>&1
    log "run $s rc=$?"
done
for tool in racecheck synccheck memcheck; do
    timeout 60 "$san" --tool "$tool" --error-exitcode 9 "$lab" run --kernel "$kernels" \
        --backend both --rows 3 --cols 131072 > "$w/sanitize-$tool.txt" 2>&1
    log "sanitize $tool rc=$?"
done
timeout 90 "$lab" bench --kernel "$kernels,softmax_cluster,rmsnorm_cluster,layernorm_cluster" \
    --backend llvm,nvvm --dtype f32,bf16 --shape 4096x32768,1024x131072,256x262144 --reps 20 \
    --quiet --out "$w/bench" > "$w/bench.txt" 2>&1
log "bench rc=$?"
