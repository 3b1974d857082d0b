#!/bin/bash
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
K=softmax_warp,rmsnorm_warp,layernorm_warp,softmax_block,rmsnorm_block,layernorm_block
for v in base v8 base2 v8b; do
  case $v in base*) lab=dist/lab;; *) lab=dist/variant/v8/lab;; esac
  $lab bench --kernel $K --shape 65536x512,32768x1024 --backend llvm --reps 20 --quiet --out "$out/$v" > "$out/$v.txt" 2>&1
done
cd "$out" && tar czf /tmp/all.tgz . && mv /tmp/all.tgz .
