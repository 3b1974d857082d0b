#!/bin/bash
# a55f2e6's dist/ (the pair reading its rank again; LayerNorm's f32 rows of clusters of 8 and
# more in the pair). On an H200, the table of record (e8d2463's record.sh, about nine minutes:
# the row-wise batch, then the peers' rotation). On any other GPU, the row-wise batch alone
# (gpu/rows.sh: the GPU tests with the new choice, lab run, the lab's bench, the sanitizer's
# four tools; about two minutes), packed into rows-batch.tgz.
cd "$(dirname "$0")/../../../../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu" | tee "$out/gpu.txt"
if [[ $gpu == *H200* ]]; then
    OUT=$out bash results/rows/e8d2463/record.sh
else
    w=$(mktemp -d)
    bash gpu/rows.sh "$w" > /dev/null 2>&1
    echo "rows rc=$?"
    tar czf "$out/rows-batch.tgz" -C "$w" . && tail -3 "$w/rows.log"
fi
