#!/bin/bash
# The cluster kernels asking the L2 for their block's share of the next row while they merge
# and write this one (`cp.async.bulk.prefetch.L2.global.L2::cache_hint`, pieces of 4 KiB, one a
# thread): pa, issued once the row's loads are issued, under `evict_last`; pb, the same after the
# merge; pn, pa under `evict_normal`. base: dist/ (827b5c3's PTX, the same as 2cb137a's). Lab
# bench of the three cluster ops at the three cluster shapes, f32 and bf16, two rounds; then ncu
# DRAM bytes and time of each variant's cluster kernels at 256 x 262144 and 4096 x 32768.
set -u
for z in "$(dirname "$0")"/../variant/*/lab.gz; do gunzip -f "$z"; chmod +x "${z%.gz}"; done
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$w/gpu.txt"
for r in 1 2; do for v in base pa pb pn; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  mkdir -p "$w/bench-$v-$r"
  timeout 100 $lab bench --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster \
    --backend llvm --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet \
    --out "$w/bench-$v-$r" > "$w/bench-$v-$r.txt" 2>&1
  echo "bench $v $r rc=$? t=$SECONDS" >> "$w/calls.log"
done; done
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
m=$m,dram__throughput.avg.pct_of_peak_sustained_elapsed
for v in base pa pb pn; do
  lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
  for s in 256x262144 4096x32768; do
    timeout 60 ncu --clock-control none --metrics $m --csv -k regex:_cluster_f32 \
      $lab run --kernel softmax_cluster_f32,rmsnorm_cluster_f32,layernorm_cluster_f32 \
      --backend llvm --rows ${s%x*} --cols ${s#*x} > "$w/ncu-$v-$s.csv" 2>&1
    echo "ncu $v $s rc=$? t=$SECONDS" >> "$w/calls.log"
  done
done
cd "$w" && tar czf /tmp/call46.tgz . && mv /tmp/call46.tgz "$out/"; cat "$w/calls.log"
