#!/bin/bash
# Why the two-pass prototype is slow: ncu of three of its launches (DRAM bytes, L2 hits), and 256-thread blocks.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvcc -O3 -std=c++17 -arch=sm_90 -o dist/exp/twopass dist/exp/twopass.cu 2>&1 | tail -3
tp=dist/exp/twopass
$tp rmsnorm f32 4096 32768 1,256,0,1,0 1,256,0,1,2 2,256,0,1,0 1,1024,0,1,0 > "$out/t256.txt" 2>&1
$tp layernorm f32 256 262144 16,256,0,1,0 8,256,0,1,2 >> "$out/t256.txt" 2>&1
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__cycles_active.avg.pct_of_peak_sustained_elapsed,launch__occupancy_limit_registers,sm__ctas_launched.sum
i=0
for c in "rmsnorm f32 4096 32768 1,1024,0,1,0" "rmsnorm f32 4096 32768 1,256,0,1,0" "layernorm f32 256 262144 8,512,0,1,2" "layernorm f32 256 262144 16,512,1,1,0"; do
  i=$((i+1))
  timeout 100 ncu --clock-control none --cache-control none -k regex:twopass --launch-skip 5 --launch-count 1 --metrics $m --csv $tp $c > "$out/ncu$i.csv" 2> "$out/ncu$i.err"
done
cd "$out" && tar czf /tmp/all.tgz . && mv /tmp/all.tgz .
