#!/bin/bash
# On an H200, the table of record (26eb88d's call4.sh: results/rows/e8d2463/record.sh, about
# nine minutes), the pair now timed beside the clusters; on any other GPU, the row-wise GPU
# tests alone (about a minute), the pair's test shapes among them.
cd "$(dirname "$0")/../.." || exit
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
[[ $gpu == *H200* ]] && exec bash dist/exp/call4.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
LAB_REQUIRE_GPU=1 timeout 300 dist/tests/gpu gpu_rows:: --test-threads=1 --show-output \
    > "$out/gpu-tests.txt" 2>&1
echo "gpu-tests rc=$?"
grep "test result" "$out/gpu-tests.txt"
