#!/bin/bash
# After the record (dist/exp/rec/: its rows-*.json and peers/peers.json): the streamed block in
# the peers' rotation against torch.compile at 4096 x 32768, ncu of RMSNorm f32's streamed and
# cluster kernels there (both compilers), and both tables.
cd "$(dirname "$0")/../.."
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d); t0=$SECONDS
lab=$(ls dist/exp/rec/rows-nvidia-*.json | head -1)
OUT=$w/streamed timeout 240 bash gpu/rows/peers.sh --lab "$lab" --lab-schedule streamed \
  --ops rmsnorm,layernorm,softmax --shapes 4096x32768 --dtypes f32,bf16 \
  --impls compile > "$w/streamed.log" 2>&1
echo "streamed-rotation rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
timeout 150 ncu --clock-control none --csv -k regex:'rmsnorm_(streamed|cluster)_f32' \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,launch__registers_per_thread,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active \
  dist/lab run --kernel rmsnorm_streamed,rmsnorm_cluster --backend all --rows 4096 --cols 32768 \
  > "$w/ncu-streamed.csv" 2>&1
echo "ncu rc=$? t=$((SECONDS - t0))" >> "$w/calls.log"
dist/xtask rows-table "$lab" --peers dist/exp/rec/peers/peers.json > "$w/rows-table.txt" 2>&1
dist/xtask rows-table "$lab" --peers "$w/streamed/peers.json" --schedule streamed \
  > "$w/rows-table-streamed.txt" 2>&1
tar czf "$out/call48b.tgz" -C "$w" . ; cat "$w/calls.log"
tail -2 "$w/rows-table.txt" "$w/rows-table-streamed.txt"
