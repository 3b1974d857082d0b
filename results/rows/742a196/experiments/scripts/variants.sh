#!/bin/bash
# Builds dist/variant/{lb,wb}/{lab,MANIFEST.txt,ptx} on the CPU machine, from the repo root at
# 742a196 after `cargo xtask dist`: the block kernels with their weights loaded with the row
# (block-weights-lb.diff: LayerNorm's, 64 registers; block-weights-wb.diff: LayerNorm's and
# RMSNorm's, RMSNorm's 48), `cargo xtask ptx`, the llvm and nvvm PTX packed beside copies of the
# lab, the diff taken back out.
set -eu
d=results/rows/742a196/experiments/scripts
for v in lb wb; do
    git apply "$d/block-weights-$v.diff"
    cargo xtask ptx >/dev/null
    git apply -R "$d/block-weights-$v.diff"
    rm -rf dist/variant/$v && mkdir -p dist/variant/$v
    cp -r dist/ptx dist/lab dist/MANIFEST.txt dist/variant/$v/
    for c in llvm nvvm; do
        gzip -c "target/ptx/$c/gpu_kernels.ptx" > "dist/variant/$v/ptx/$c/gpu_kernels.ptx.gz"
    done
done
cargo xtask ptx >/dev/null
