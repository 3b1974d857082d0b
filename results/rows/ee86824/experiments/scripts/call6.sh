#!/bin/bash
# On an H200 alone (on any other GPU it says so and stops): a55f2e6's row-wise batch without the
# peers' rotation (gpu/rows.sh: the GPU tests, lab run, the lab's bench, the sanitizer's four
# tools; about two and a half minutes), packed into rows-batch.tgz: what the device time left
# after calls 1–5 holds, where the whole record (call4.sh) takes nine minutes.
cd "$(dirname "$0")/../../../../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
[[ $gpu == *H200* ]] || { echo "not an H200 ($gpu): nothing run"; exit 3; }
echo "$gpu" | tee "$out/gpu.txt"
w=$(mktemp -d)
bash gpu/rows.sh "$w" > /dev/null 2>&1
echo "rows rc=$?"
tar czf "$out/rows-batch.tgz" -C "$w" . && tail -3 "$w/rows.log"
