#!/bin/bash
# rust-cuda's bounded RMSNorm f32 cluster (dist/ at c777cc0) against b11491a's build
# (dist/variant/old): lab bench at the cluster shapes, old and new alternating, two rounds;
# softmax's clusters (the same SASS in both) as the control.
cd "$(dirname "$0")/../.."
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
for r in 1 2; do for v in old new; do
  lab=dist/lab; [[ $v == old ]] && lab=dist/variant/old/lab
  timeout 60 $lab bench --kernel rmsnorm_cluster,softmax_cluster --backend llvm,nvvm \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet --out "$w/bench-$v-$r" \
    > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
done; done
tar czf "$out/call53.tgz" -C "$w" . ; cat "$w/calls.log"
grep -h "rmsnorm_cluster.*nvvm.*f32" "$w"/bench-*.txt | cut -c1-120
