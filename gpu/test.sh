#!/usr/bin/env bash
# On the GPU machine (no cargo): run every GPU test binary from dist/ and keep the log.
# Usage, from the repo root with dist/ built by `cargo xtask dist`:  bash gpu/test.sh [OUTDIR]
set -uo pipefail
out=${1:-${OUT:-results/tests}}
mkdir -p "$out"
log=$out/gpu-tests.log
{
    echo "# GPU tests: $(cat dist/MANIFEST.txt | head -2 | tr '\n' ' ')"
    echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | sed 's/^/# gpu: /'
    dist/lab info
} 2>&1 | tee "$log"
# This machine must have a GPU: "no CUDA device" fails the GPU tests instead of skipping them.
export LAB_REQUIRE_GPU=1
status=0
for t in dist/tests/*; do
    echo "== $t" | tee -a "$log"
    "$t" --test-threads=1 --show-output 2>&1 | tee -a "$log"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
done
echo "gpu tests: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED)" | tee -a "$log"
exit $status
