#!/usr/bin/env bash
# On the GPU machine (no cargo): the row-wise family (softmax, RMSNorm, LayerNorm; narrow warp,
# warp, block, wide and cluster schedules; f32 and bf16) in one batch: its GPU tests; one `lab
# run` of every kernel (what the profilers launch); the bench at the issue's seven shapes and both types on
# llvm, nvvm and nvcc, the D2D copy of each matrix measured in the same run; then the
# special-value test under compute-sanitizer's four tools (every kernel, both types, both paths,
# every backend). Everything goes under the output folder: the logs, the results file (lab
# bench's JSON and text) and rows-*.json, the records the peers' table merges with. About three
# minutes, the sanitizer steps most of it (ROWS_SANITIZE=0 skips them).
# Usage, from the repo root with dist/ built by `cargo xtask dist`:  bash gpu/rows.sh [OUTDIR]
#   OUTDIR defaults to $OUT (the device tool's output folder), else results/rows.
set -uo pipefail
out=${1:-${OUT:-results/rows}}
mkdir -p "$out"
log=$out/rows.log
# shellcheck source=SCRIPTDIR/steps.sh
source "$(dirname "$0")/steps.sh"
batch_header "row-wise family"

# This machine must have a GPU: "no CUDA device" fails the GPU tests instead of skipping them.
export LAB_REQUIRE_GPU=1
step gpu-tests 120 dist/tests/gpu gpu_rows:: --test-threads=1 --show-output
# One launch of each kernel as the profilers see it (warm-up, one launch in the NVTX range
# `profile`, the check), f32 at 4096x8192: the warp schedule does not hold such rows and says so.
step lab-run 60 dist/lab run --kernel rows --backend all --rows 4096 --cols 8192 \
    --manifest "$out/rows-run.json"
step lab-bench 240 dist/lab bench --kernel rows --backend llvm,nvvm,nvcc --reps 20 --quiet \
    --out "$out"
# Last, so the measurements are in whatever the sanitizer costs: the special-value rows of
# every kernel (both types, both the 16-byte and the element-by-element path, every backend).
if [[ ${ROWS_SANITIZE:-1} != 0 ]]; then
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    for tool in memcheck racecheck synccheck initcheck; do
        extra=()
        [[ $tool == memcheck ]] && extra=(--leak-check full)
        step "sanitize-$tool" 75 "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 9 \
            dist/tests/gpu gpu_rows::special_values_follow_pytorch --test-threads=1
    done
fi

batch_end "row-wise check"
