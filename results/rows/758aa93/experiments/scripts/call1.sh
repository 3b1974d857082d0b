#!/bin/bash
# LayerNorm's cluster holding two rows a block with rustc's spills cut (lp2:
# lp2-pair-unspilled.diff, built by scripts/variant.sh with its host), checked (lab run at odd
# and even row counts, every output against the CPU reference; racecheck, synccheck, memcheck),
# then timed against dist/'s build (base) at the rows the cluster takes, three rounds
# alternating, RMSNorm's clusters beside as the unchanged control (gpu/rows/variants.sh). About
# three and a half minutes. For an H200: on any other GPU it says so and stops, since the
# question (LayerNorm's shortfall at 256 x 262144) is the H200's.
cd "$(dirname "$0")/../.." || exit
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
[[ $gpu == *H200* || ${ANY_GPU:-0} == 1 ]] || { echo "not an H200 ($gpu): nothing run"; exit 3; }
bash gpu/rows/variants.sh --kernel layernorm_cluster,rmsnorm_cluster \
  --shape 4096x32768,1024x131072,256x262144 \
  --check 3x131072,1x262144,3x262144,256x262144,7x131072,5x32768,2x32768 \
  --sanitize racecheck,synccheck,memcheck --rounds 3 --tag call1 lp2
