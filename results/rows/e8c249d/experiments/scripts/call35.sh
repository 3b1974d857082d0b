#!/bin/bash
# The table of record at e8c249d (results/rows/e8d2463/record.sh: tests, lab run, bench,
# sanitizer, peers), then ncu of two cluster kernels under the driver's default placement and
# under load balancing (dist/variant/pol: the lab's launch given LAB_CLUSTER_POLICY, a patch not
# kept; e8c249d's PTX): rmsnorm_cluster_bf16 at 1024 x 131072 (clusters of 8, where balancing
# read 2-6 % slower) and layernorm_cluster_f32 at 256 x 262144 (clusters of 16).
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
OUT=$w bash results/rows/e8d2463/record.sh > "$w/record.txt" 2>&1
echo "record rc=$? t=$SECONDS" >> "$w/calls.log"
for spec in rmsnorm_cluster_bf16:1024:131072 layernorm_cluster_f32:256:262144; do
  IFS=: read -r k r c <<< "$spec"
  for p in 0 2; do
    LAB_CLUSTER_POLICY=$p timeout 120 dist/xtask profile --lab dist/variant/pol/lab --kernel $k \
      --backend llvm --rows $r --cols $c --clock-control none \
      --output "$w/prof-$k-$p" -q > "$w/profile-$k-policy$p.txt" 2>&1
    echo "profile $k policy $p rc=$? t=$SECONDS" >> "$w/calls.log"
  done
done
find "$w" -name '*.ncu-rep' -delete
cd "$w" && tar czf /tmp/call35.tgz . && mv /tmp/call35.tgz "$out/"; cat "$w/calls.log"
