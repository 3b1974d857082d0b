#!/bin/bash
# The block schedule with 2 vectors a thread (b2: BLOCK_VECTORS = 2, twice the threads a row)
# against 4 (base), at the rows a block holds in both: lab bench alternating, then the peers'
# rotation (compile, liger, triton) with each build's block kernels, alternating.
cd "$(dirname "$0")/../.."
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$w/gpu.txt"
shapes=32768x1024,16384x4096,8192x8192
for r in 1 2; do for v in base b2; do
  [[ $r == 2 ]] && v=$([[ $v == base ]] && echo b2 || echo base)
  lab=dist/lab; [[ $v == b2 ]] && lab=dist/variant/b2/lab
  timeout 90 $lab bench --kernel softmax_block,rmsnorm_block,layernorm_block --backend llvm,nvvm \
    --shape $shapes --reps 20 --quiet --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
done; done
for r in 1 2; do for v in base b2; do
  [[ $r == 2 ]] && v=$([[ $v == base ]] && echo b2 || echo base)
  ptx=dist/ptx; [[ $v == b2 ]] && ptx=dist/variant/b2/ptx
  mkdir -p "$w/peers-$v-$r"
  OUT=$w/peers-$v-$r timeout 150 bash gpu/rows/peers.sh --lab "$(ls $w/bench-$v-1/rows-*.json)" \
    --ptx $ptx --lab-schedule block --shapes $shapes --impls compile,liger,triton \
    > "$w/peers-$v-$r.log" 2>&1
  echo "peers $v $r rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
done; done
tar czf "$out/call2.tgz" -C "$w" . ; cat "$w/calls.log"
for f in "$w"/peers-*/peers.txt; do echo "== $f"; grep -E "^(softmax|rmsnorm|layernorm)" "$f" | cut -c1-150; done
