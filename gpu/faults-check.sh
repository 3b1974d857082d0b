#!/usr/bin/env bash
# On the GPU machine (no cargo): the fault catalogue's GPU tests, also under compute-sanitizer's
# memcheck, racecheck, synccheck and initcheck, then every fault kernel and its fixed twin once
# as the profilers see them (lab run: warm-up, one launch in the NVTX range `profile`, the check
# at the profiling size), then each timed against its twin (lab bench, 20 reps, both Rust
# compilers). Everything goes under the output folder; about two minutes.
# Usage, from the repo root with dist/ built by `cargo xtask dist`:  bash gpu/faults-check.sh [OUTDIR]
#   OUTDIR defaults to $OUT (the device tool's output folder), else results/faults.
set -uo pipefail
out=${1:-${OUT:-results/faults}}
mkdir -p "$out"
log=$out/faults-check.log
# shellcheck source=SCRIPTDIR/steps.sh
source "$(dirname "$0")/steps.sh"
batch_header "fault catalogue check"

# This machine must have a GPU: "no CUDA device" fails the GPU tests instead of skipping them.
export LAB_REQUIRE_GPU=1
step gpu-tests 50 dist/tests/gpu gpu_faults:: --test-threads=1 --show-output
# The same small sizes under compute-sanitizer's four tools (the profiling sizes are too slow
# for `xtask sanitize`): every launch of the family, any finding fails the step.
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck initcheck; do
    step "sanitize-$tool" 60 "$sanitizer" --tool "$tool" --error-exitcode 9 \
        dist/tests/gpu gpu_faults::every_fault_and_its_twin_is_right_on_both_compilers --test-threads=1
done
step lab-run 50 dist/lab run --kernel faults --backend both --manifest "$out/faults-run.json"
step lab-bench 75 dist/lab bench --kernel faults --backend llvm,nvvm --reps 20 --out "$out"

batch_end "faults check"
