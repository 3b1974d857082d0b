#!/bin/bash
# A second device call, after call48 (carry ["dist"], .whl/ in the tree): the warp and narrow
# norms loading each vector's row and weights under one branch (variant wr,
# dist/exp/weights-one-branch.diff: rust-cuda's rmsnorm_warp_f32 issued its weights only once
# the row had landed; registers and spills unchanged, stats.txt) against dist/ (6df3d05, the
# PTX of 77e1ae0). Lab bench of those kernels at the short shapes, base and wr alternating,
# two rounds, both Rust compilers; then each in the peers' rotation against torch.compile (the
# verdict's method), its launches and PTX from its own bench's rows file.
cd "$(dirname "$0")/../.."
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
K=rmsnorm_warp,layernorm_warp,rmsnorm_narrow,layernorm_narrow
for r in 1 2; do for v in base wr; do
  lab=dist/lab; [[ $v = wr ]] && lab=dist/variant/wr/lab
  timeout 90 $lab bench --kernel $K --backend llvm,nvvm --shape 65536x512,32768x1024 \
    --reps 20 --quiet --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
done; done
for v in base wr; do
  rows=$(ls "$w"/bench-$v-1/rows-*.json | head -1)
  OUT=$w/rotation-$v timeout 200 bash gpu/rows/peers.sh --lab "$rows" --ops rmsnorm,layernorm \
    --shapes 65536x512,32768x1024 --dtypes f32,bf16 --impls compile > "$w/rotation-$v.log" 2>&1
  echo "rotation $v rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
done
tar czf "$out/call49.tgz" -C "$w" . ; cat "$w/calls.log"
