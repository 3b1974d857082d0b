#!/bin/bash
# On an H200: the table of record first (results/rows/e8d2463/record.sh), then call3 (the block
# schedule's row policy); on another GPU, call3 alone (its record is taken).
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$gpu" > "$out/gpu.txt"
if [[ $gpu == *H200* ]]; then OUT=$out bash results/rows/e8d2463/record.sh; fi
OUT=$out bash dist/exp/call3.sh
