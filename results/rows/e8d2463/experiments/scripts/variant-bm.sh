#!/bin/bash
# Builds dist/variant/{bm1,bm2,bmall}/{lab,MANIFEST.txt,ptx} on the CPU machine, from the repo
# root at e453b5d's kernel sources after `cargo xtask dist`: LayerNorm's cluster kernels with
# loads of `b` it does not keep issued before the merge (b-before-merge-<v>.diff: one vector,
# `b_ahead`'s, or all five), `cargo xtask ptx`, and `.maxnreg 64` written into the
# layernorm_cluster entries of the llvm PTX (without it they took 66–72 registers; with it 64,
# no spills, but bmall's bf16 entry spills 24 bytes), the diff taken back out.
set -eu
d=results/rows/e8d2463/experiments/scripts
for v in bm1 bm2 bmall; do
    git apply "$d/b-before-merge-$v.diff"
    cargo xtask ptx >/dev/null
    git apply -R "$d/b-before-merge-$v.diff"
    rm -rf dist/variant/$v && mkdir -p dist/variant/$v
    cp -r dist/ptx dist/lab dist/MANIFEST.txt dist/variant/$v/
    sed -E 's#^\)( +)// @(layernorm_cluster_(f32|bf16))$#)\1// @\2\n.maxnreg 64#' \
        target/ptx/llvm/gpu_kernels.ptx | gzip > dist/variant/$v/ptx/llvm/gpu_kernels.ptx.gz
done
cargo xtask ptx >/dev/null
