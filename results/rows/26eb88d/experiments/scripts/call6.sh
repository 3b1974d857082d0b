#!/bin/bash
# LayerNorm's cluster holding two rows a block (lp: ln-pair.diff, built by scripts/variant.sh
# with its host) and LayerNorm's loads of `b` ahead on the coherent path (bo:
# bo-b-loads-ordered.diff), each checked (lab run at odd and even row counts, every output
# against the CPU reference; racecheck, synccheck, memcheck), then timed against dist/'s build
# (base) at the rows the cluster takes, alternating, RMSNorm's clusters beside as the unchanged
# control (gpu/rows/variants.sh). About six minutes by earlier calls' step times, so call5 is a
# call of its own.
cd "$(dirname "$0")/../.." || exit
bash gpu/rows/variants.sh --kernel layernorm_cluster,rmsnorm_cluster \
  --shape 4096x32768,1024x131072,256x262144 \
  --check 3x131072,1x262144,3x262144,256x262144,7x131072,5x32768,2x32768 \
  --sanitize racecheck,synccheck,memcheck --tag call6 lp bo
