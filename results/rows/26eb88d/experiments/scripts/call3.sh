#!/bin/bash
# The block schedule with the row loaded under evict_normal (bn) instead of evict_last
# (base), at the rows the block schedule takes: lab bench alternating, then the peers'
# rotation (compile, liger, triton) with each build's block kernels, alternating.
cd "$(dirname "$0")/../.." || exit
set -u
# bn changes the kernels alone, so it travels as its PTX (scripts/variant.sh): dist/'s lab,
# copied beside that PTX, loads it.
[[ -x dist/variant/bn/lab ]] || cp dist/lab dist/variant/bn/lab || exit
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$w/gpu.txt"
shapes=32768x1024,16384x4096,8192x8192
for r in 1; do for v in base bn; do
  lab=dist/lab; [[ $v == bn ]] && lab=dist/variant/bn/lab
  timeout 90 $lab bench --kernel softmax_block,rmsnorm_block,layernorm_block --backend llvm,nvvm \
    --shape $shapes --reps 20 --quiet --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
done; done
for r in 1 2; do for v in base bn; do
  [[ $r == 2 ]] && v=$([[ $v == base ]] && echo bn || echo base)
  ptx=dist/ptx; [[ $v == bn ]] && ptx=dist/variant/bn/ptx
  mkdir -p "$w/peers-$v-$r"
  OUT=$w/peers-$v-$r timeout 150 bash gpu/rows/peers.sh --lab "$(ls $w/bench-$v-1/rows-*.json)" \
    --ptx $ptx --lab-schedule block --shapes $shapes --impls compile,liger,triton \
    > "$w/peers-$v-$r.log" 2>&1
  echo "peers $v $r rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
done; done
tar czf "$out/call3.tgz" -C "$w" . ; cat "$w/calls.log"
for f in "$w"/peers-*/peers.txt; do echo "== $f"; grep -E "^(softmax|rmsnorm|layernorm)" "$f" | cut -c1-150; done
