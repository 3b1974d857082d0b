#!/bin/bash
# The short cases in the clean-L2 rotation, the lab's kernels as built (evict_last) against
# evict_normal (dist/variant/en), alternating; each run's JSON straight into $OUT.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
rows=$(ls results/rows/979852d/rows-nvidia-*.json)
for v in base en base2 en2; do
  p=dist/ptx; [[ $v == en* ]] && p=dist/variant/en/ptx
  timeout 60 python3 gpu/rows/peers.py --lab "$rows" --ptx $p --l2 clean --shapes 65536x512,32768x1024 \
    --impls compile --reps 30 --out "$out/clean-$v.json" > /dev/null 2>> "$out/calls.log"
  echo "clean $v rc=$?" >> "$out/calls.log"
done
