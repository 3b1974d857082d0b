#!/bin/bash
# Two-pass (second read from the L2) prototype against the lab's kernels at the shapes below 0.90.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90 -o dist/exp/twopass dist/exp/twopass.cu 2>&1 | tail -3
tp=dist/exp/twopass
long="16,512,1,1,0 16,512,0,1,0 8,512,1,1,0 8,512,0,1,0 8,1024,1,1,0 8,1024,0,1,0 4,1024,1,1,0 4,1024,0,1,0 4,512,0,1,0 2,1024,0,1,0 4,1024,0,1,2 4,1024,0,0,0 8,512,0,1,2"
{
for s in "layernorm f32 256 262144" "layernorm bf16 256 262144" "layernorm bf16 1024 131072" "layernorm f32 1024 131072"; do
  $tp $s $long
done
$tp rmsnorm f32 4096 32768 1,1024,0,1,0 1,512,0,1,0 2,512,0,1,0 2,1024,0,1,0 1,1024,0,1,2 1,512,0,1,2 4,512,0,1,0 1,1024,0,0,0
for s in "softmax bf16 256 262144" "softmax f32 256 262144" "rmsnorm bf16 256 262144"; do
  $tp $s 4,1024,0,1,0 8,512,0,1,0 8,1024,0,1,0 16,512,0,1,0 4,512,0,1,0 4,1024,0,1,2
done
} 2>&1 | tee "$out/twopass.txt"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
{
dist/lab bench --kernel layernorm_cluster --shape 256x262144,1024x131072 --backend llvm --reps 20 --quiet --out "$out/lab1"
dist/lab bench --kernel rmsnorm_cluster,rmsnorm_wide --shape 4096x32768 --dtype f32 --backend llvm --reps 20 --quiet --out "$out/lab2"
dist/lab bench --kernel softmax_cluster,rmsnorm_cluster --shape 256x262144 --backend llvm --reps 20 --quiet --out "$out/lab3"
} > "$out/lab.txt" 2>&1
cd "$out" && tar czf all.tgz --exclude=all.tgz .
