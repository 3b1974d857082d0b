#!/bin/bash
# The table of record (results/rows/e8d2463/record.sh: the row-wise batch, then the peers with
# the same Rust kernels in their rotation and their compiled kernels kept), alone in its call:
# the batch took 130 s at 26eb88d and the rotation runs under a 420 s limit, so call3 (bn, about
# four and a half minutes on the H100) would not fit beside it in one call's ten.
cd "$(dirname "$0")/../.." || exit
out=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
OUT=$out bash results/rows/e8d2463/record.sh
