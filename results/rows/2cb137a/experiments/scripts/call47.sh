#!/bin/bash
# Clusters of 16 under the driver's default (spread) placement against load balancing, with
# 2cb137a's kernels (LayerNorm's loads of `b` from the output's start, the merge of equal
# parts): sp, a host whose `balances_clusters` is false under LAB_SPREAD; base: dist/. Lab bench
# of the three cluster ops at 256 x 262144, f32 and bf16, two rounds each, alternating; ncu time
# of layernorm_cluster_f32 under each.
set -u
for z in "$(dirname "$0")"/../variant/*/lab.gz; do gunzip -f "$z"; chmod +x "${z%.gz}"; done
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$w/gpu.txt"
for r in 1 2 3; do for v in base sp; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  mkdir -p "$w/bench-$v-$r"
  ( [[ $v == sp ]] && export LAB_SPREAD=1
    timeout 100 $lab bench --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster \
      --backend llvm --shape 256x262144 --reps 20 --quiet \
      --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1 )
  echo "bench $v $r rc=$? t=$SECONDS" >> "$w/calls.log"
done; done
m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,sm__cycles_active.avg,sm__cycles_elapsed.avg,launch__grid_size
for v in base sp; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  ( [[ $v == sp ]] && export LAB_SPREAD=1
    timeout 60 ncu --clock-control none --metrics $m --csv -k regex:layernorm_cluster_f32 \
      $lab run --kernel layernorm_cluster_f32 --backend llvm --rows 256 --cols 262144 \
      > "$w/ncu-$v.csv" 2>&1 )
  echo "ncu $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call47.tgz . && mv /tmp/call47.tgz "$out/"; cat "$w/calls.log"
