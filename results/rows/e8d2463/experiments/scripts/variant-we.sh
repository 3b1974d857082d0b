#!/bin/bash
# Builds dist/variant/we/ptx on the CPU machine, from the repo root after `cargo xtask dist` at
# e8d2463 or later with the same kernels: weights-early-experiment.diff applied, `cargo xtask
# ptx`, the llvm and nvvm PTX packed beside dist/ptx's others, the diff taken back out.
# Registers at 3420486 (cargo xtask asm --stats), as built -> weights early: layernorm_warp_f32
# 34/44 -> 64 (llvm/nvvm), rmsnorm_warp_f32 32 -> 48, layernorm_narrow 27-32 -> 40,
# rmsnorm_narrow_f32 24/29 -> 32, rmsnorm_narrow_bf16 32 -> 32.
set -eu
d=results/rows/e8d2463/experiments/scripts
git apply "$d/weights-early-experiment.diff"
trap 'git apply -R "$d/weights-early-experiment.diff"; cargo xtask ptx >/dev/null 2>&1' EXIT
cargo xtask ptx >/dev/null
rm -rf dist/variant/we && mkdir -p dist/variant/we && cp -r dist/ptx dist/variant/we/
for c in llvm nvvm; do gzip -c "target/ptx/$c/gpu_kernels.ptx" > "dist/variant/we/ptx/$c/gpu_kernels.ptx.gz"; done
