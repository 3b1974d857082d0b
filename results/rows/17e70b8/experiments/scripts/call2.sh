#!/bin/bash
set -u
w=$OUT; t0=$(date +%s)
p() { echo "$1 $(( $(date +%s) - t0 )) s" >> $w/progress.txt; }
C="layernorm:65536:512:bf16 softmax:65536:512:f32 rmsnorm:65536:512:bf16 rmsnorm:4096:32768:f32"
python3 dist/exp/retain.py 25 $w/retain.json $C > $w/retain.txt 2>&1; p retain
timeout 200 ncu --clock-control none --cache-control none -k "regex:_warp_|triton_per|triton_red|_cluster_" \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum \
  --csv python3 dist/exp/retain.py 3 $w/retain-ncu.json layernorm:65536:512:bf16 rmsnorm:4096:32768:f32 > $w/retain-ncu.csv 2> $w/retain-ncu.err; p ncu
cd $w && tar czf /tmp/all.tgz . && mv /tmp/all.tgz . ; p done
