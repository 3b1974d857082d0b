#!/bin/bash
# Not run (the session's device time ran out): the short cases with the L2 clean, the lab's
# kernels as built (evict_last) against evict_normal (dist/variant/en, scripts/variants.sh), in
# the peers' rotation (--l2 clean) and in the lab's bench (--cache cold, whose flush also leaves
# the L2 clean), alternating; each run's output straight into $OUT.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
rows=$(ls results/rows/979852d/rows-nvidia-*.json)
for v in base en base2 en2; do
  p=dist/ptx; lab=dist/lab; [[ $v == en* ]] && p=dist/variant/en/ptx lab=dist/variant/en/lab
  timeout 60 python3 gpu/rows/peers.py --lab "$rows" --ptx $p --l2 clean --shapes 65536x512,32768x1024 \
    --impls compile --reps 30 --out "$out/clean-$v.json" > /dev/null 2>> "$out/calls.log"
  echo "clean $v rc=$?" >> "$out/calls.log"
  mkdir -p "$out/bench-$v"
  timeout 120 $lab bench --kernel rows --shape 65536x512,32768x1024 --cache cold --reps 20 --quiet \
    --out "$out/bench-$v" >> "$out/calls.log" 2>&1
  echo "bench $v rc=$?" >> "$out/calls.log"
done
cd "$out" && tar czf /tmp/bench.tgz bench-* && rm -rf bench-* && mv /tmp/bench.tgz .
