#!/bin/bash
# RMSNorm f32 at 4096 x 32768, the one row where a peer leads beyond the rounds' spread
# (torch.compile 4.2 % ahead of the chosen cluster in b11491a's rotation). In the lab's bench the
# wide block of 1024 threads (not chosen for an op with weights) and the cluster read within 1 %
# of each other, either ahead (b11491a, c777cc0): here both go into the peers' rotation beside
# torch.compile and the plain Triton kernel, chosen, wide, wide, chosen, each run keeping the
# peers' compiled kernels (torch.compile's for this very row among them). No variant: dist/ as
# built. About two minutes by call2's rotations.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
pack() { tar czf "$out/call7.tgz" -C "$w" .; }
log() { echo "$* t=$((SECONDS - t0))s" | tee -a "$w/steps.log"; pack; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$w/gpu.txt"
timeout 90 dist/lab bench --kernel rmsnorm_wide,rmsnorm_cluster --backend llvm,nvvm --dtype f32 \
    --shape 4096x32768 --reps 20 --quiet --out "$w/bench" > "$w/bench.txt" 2>&1
log "bench rc=$?"
rows=$(ls "$w"/bench/rows-*.json)
i=0
for s in chosen wide wide chosen; do
    i=$((i + 1)); flag=()
    [[ $s == wide ]] && flag=(--lab-schedule wide)
    OUT=$w/peers-$i-$s timeout 120 bash gpu/rows/peers.sh --lab "$rows" "${flag[@]}" \
        --ops rmsnorm --dtypes f32 --shapes 4096x32768 --impls compile,triton \
        > "$w/peers-$i-$s.log" 2>&1
    log "peers $i $s rc=$?"
done
grep -h "^rmsnorm" "$w"/peers-*/peers.txt | cut -c1-160
