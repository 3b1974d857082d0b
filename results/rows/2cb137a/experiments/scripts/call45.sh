#!/bin/bash
# The L1 the shared-memory carveout leaves, as a bound on LayerNorm's clusters (2cb137a's tree,
# dist/ at 827b5c3: the same PTX). A: LayerNorm's cluster keeping 0, 1, 2 vectors of `b`
# (kb0..kb2) against 3 (base): two f32 blocks an SM ask 133, 149, 165 and 181 KiB with the
# reserve, so carveouts of 164, 164, 196, 196 KiB (L1 92, 92, 60, 60); bf16's four blocks
# 138, 154, 170, 186. Lab bench of the LayerNorm and RMSNorm clusters at the three cluster
# shapes, f32 and bf16, two rounds. B: the same kernels as base, the host asking a preferred
# carveout (LAB_CARVEOUT, percent of 228 KiB) for every cluster launch: softmax and RMSNorm
# clusters, one round each of unset, 71, 85, 100. C: ncu's shared-memory config of each.
set -u
for z in "$(dirname "$0")"/../variant/*/lab.gz; do gunzip -f "$z"; chmod +x "${z%.gz}"; done
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$w/gpu.txt"
for r in 1 2; do for v in base kb0 kb1 kb2; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  mkdir -p "$w/bench-$v-$r"
  timeout 90 $lab bench --kernel rmsnorm_cluster,layernorm_cluster --backend llvm \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet \
    --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$SECONDS" >> "$w/calls.log"
done; done
for c in unset 71 85 100; do
  mkdir -p "$w/co-$c"
  ( [[ $c != unset ]] && export LAB_CARVEOUT=$c
    timeout 90 dist/variant/co/lab bench --kernel softmax_cluster,rmsnorm_cluster \
      --backend llvm --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet \
      --out "$w/co-$c" > "$w/co-$c.txt" 2>&1 )
  echo "carveout $c rc=$? t=$SECONDS" >> "$w/calls.log"
done
m=launch__shared_mem_config_size,launch__shared_mem_per_block_dynamic,gpu__time_duration.sum
m=$m,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__occupancy_limit_shared_mem
for v in base kb1; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  timeout 60 ncu --clock-control none --metrics $m --csv -k regex:layernorm_cluster \
    $lab run --kernel layernorm_cluster --backend llvm --rows 256 --cols 262144 \
    > "$w/ncu-$v.csv" 2>&1
  echo "ncu $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
for c in unset 71 85 100; do
  ( [[ $c != unset ]] && export LAB_CARVEOUT=$c
    timeout 60 ncu --clock-control none --metrics $m --csv -k regex:_cluster_f32 \
      dist/variant/co/lab run --kernel softmax_cluster_f32,rmsnorm_cluster_f32 \
      --backend llvm --rows 256 --cols 262144 > "$w/ncu-co-$c.csv" 2>&1 )
  echo "ncu co $c rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call45.tgz . && mv /tmp/call45.tgz "$out/"; cat "$w/calls.log"
