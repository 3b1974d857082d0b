#!/bin/bash
# The CUDA C++ twin's block softmax held to 32 registers by __launch_bounds__(1024, 2) (nb)
# against as built (base: 36 in f32, 38 in bf16, one block of 1024 an SM), where the block
# schedule takes softmax: the lab's bench of the nvcc column, base and nb alternating.
cd "$(dirname "$0")/../.."
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$w/gpu.txt"
shapes=32768x1024,16384x4096,8192x8192,4096x32768
for r in 1 2; do for v in base nb; do
  [[ $r == 2 ]] && v=$([[ $v == base ]] && echo nb || echo base)
  lab=dist/lab; [[ $v == nb ]] && lab=dist/variant/nb/lab
  timeout 90 $lab bench --kernel softmax_block --backend nvcc,llvm --shape $shapes --reps 20 \
    --quiet --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
done; done
tar czf "$out/call5.tgz" -C "$w" . ; cat "$w/calls.log"
grep -h "softmax_block" "$w"/bench-*.txt | cut -c1-160 | head -40
