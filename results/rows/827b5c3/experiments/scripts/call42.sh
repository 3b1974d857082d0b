#!/bin/bash
# LayerNorm's statistic in one pass and one merge in the warp and block schedules, against
# 89cf827 (dist/): v1, every LayerNorm kernel (warp, narrow, block, wide) merges the one-pass
# shifted sums once, as the cluster does (the warp and the block given a merge of equal parts);
# v2, the block and wide kernels alone.
# Lab bench of LayerNorm's warp, narrow, block and wide kernels at 65536 x 512, 32768 x 1024,
# 16384 x 4096, 8192 x 8192 and 4096 x 32768, f32 and bf16, both Rust compilers, two rounds,
# alternating (the bench checks every output).
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$w/gpu.txt"
for r in 1 2; do for v in base v1 v2; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  mkdir -p "$w/bench-$v-$r"
  timeout 120 $lab bench --kernel layernorm_narrow,layernorm_warp,layernorm_block,layernorm_wide \
    --backend llvm,nvvm --shape 65536x512,32768x1024,16384x4096,8192x8192,4096x32768 --reps 20 --quiet \
    --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$SECONDS" >> "$w/calls.log"
done; done
cd "$w" && tar czf /tmp/call42.tgz . && mv /tmp/call42.tgz "$out/"; cat "$w/calls.log"
