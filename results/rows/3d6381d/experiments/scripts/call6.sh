#!/bin/bash
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvcc -O3 -std=c++17 -arch=sm_90 -o dist/exp/warpwalk dist/exp/warpwalk.cu 2>&1 | tail -3
dist/exp/warpwalk > "$out/warpwalk.txt" 2>&1
dist/lab bench --kernel softmax_warp,rmsnorm_warp,layernorm_warp,softmax_block,rmsnorm_block,layernorm_block --shape 65536x512,32768x1024 --backend llvm --reps 20 --quiet --out "$out/lab" > "$out/lab.txt" 2>&1
cd "$out" && tar czf /tmp/all.tgz . && mv /tmp/all.tgz .
