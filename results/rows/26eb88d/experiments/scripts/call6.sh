#!/bin/bash
# LayerNorm's cluster holding two rows a block, one a half, the halves out of step and sharing
# one kept copy of `w` and all of `b` (lp: ln-pair.diff, built by scripts/variant.sh with its
# host) against as built (base). Correct first (lab run checks every output; odd row counts
# leave a half idle; racecheck and synccheck), then the lab's bench alternating at the rows
# the cluster takes, RMSNorm's clusters beside as the unchanged control; then call5 (the C++
# twin's block softmax, two an SM), in the same call.
cd "$(dirname "$0")/../.."
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
# Packed again after every step, so a call cut at its limit still brings back what ran; a new
# kernel that hangs or fails its first runs stops the rest of lp's steps.
pack() { tar czf "$out/call6.tgz" -C "$w" .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$w/gpu.txt"
lab=dist/variant/lp/lab
ok=1
for s in 1x262144 3x262144 256x262144 7x131072 5x32768 2x32768; do
  timeout 30 $lab run --kernel layernorm_cluster --rows ${s%x*} --cols ${s#*x} >> "$w/run.txt" 2>&1
  rc=$?; echo "run $s rc=$rc t=$((SECONDS - t0))" >> "$w/calls.log"; pack
  [[ $rc == 0 ]] || { ok=0; break; }
done
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck synccheck memcheck; do
  [[ $ok == 1 ]] || break
  timeout 90 "$san" --tool $tool --error-exitcode 9 $lab run --kernel layernorm_cluster \
    --rows 3 --cols 131072 > "$w/sanitize-$tool.txt" 2>&1
  echo "sanitize $tool rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"; pack
done
shapes=4096x32768,1024x131072,256x262144
for r in 1 2; do for v in base lp; do
  [[ $ok == 1 ]] || break 2
  [[ $r == 2 ]] && v=$([[ $v == base ]] && echo lp || echo base)
  l=dist/lab; [[ $v == lp ]] && l=$lab
  timeout 90 $l bench --kernel layernorm_cluster,rmsnorm_cluster --backend llvm,nvvm \
    --shape $shapes --reps 20 --quiet --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"; pack
done; done
cat "$w/calls.log"; grep -h "ok\|FAIL" "$w/run.txt" | head -20
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|hazard" "$w"/sanitize-*.txt | head
grep -h "_cluster" "$w"/bench-*.txt | cut -c1-160 | head -50
OUT=$out bash dist/exp/call5.sh
