#!/bin/bash
# Scratch experiment: the row loads' L2 policy (base evict_last, en evict_normal, ef evict_first)
# on the short rows and RMSNorm f32 4096x32768, in the lab's bench, the peers' rotation and ncu.
set -u
w=$OUT; t0=$(date +%s)
p() { echo "$1 $(( $(date +%s) - t0 )) s" >> $w/progress.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $w/gpu.txt 2>&1
python3 dist/exp/inductor_dump.py > $w/inductor.txt 2>&1; p inductor
lab() { if [ $1 = base ]; then echo dist/lab; else echo dist/variant/$1/lab; fi; }
K=softmax_warp,rmsnorm_warp,layernorm_warp,softmax_block,rmsnorm_block,layernorm_block
S=65536x512,32768x1024
for v in base en ef; do
  $(lab $v) bench --kernel $K --shape $S --backend llvm --reps 20 --quiet --out $w/s-$v > $w/s-$v.txt 2>&1; p s-$v
done
for v in base en ef; do
  $(lab $v) bench --kernel rmsnorm_cluster,rmsnorm_wide --shape 4096x32768 --dtype f32 --backend llvm --reps 20 --quiet --out $w/m-$v > $w/m-$v.txt 2>&1; p m-$v
done
j() { ls $w/$1/rows-*.json | head -1; }
REPO=$PWD timeout 240 python3 dist/exp/variants.py --shapes $S --reps 30 --backends rust-llvm --out $w/rot-s.json \
  base=$(j s-base) en=$(j s-base)@dist/variant/en/ptx ef=$(j s-base)@dist/variant/ef/ptx > $w/rot-s.txt 2>&1; p rot-s
REPO=$PWD timeout 60 python3 dist/exp/variants.py --shapes 4096x32768 --ops rmsnorm --dtypes f32 --reps 30 --backends rust-llvm --out $w/rot-m.json \
  base=$(j m-base) en=$(j m-base)@dist/variant/en/ptx ef=$(j m-base)@dist/variant/ef/ptx > $w/rot-m.txt 2>&1; p rot-m
for c in layernorm:bf16 softmax:f32; do
  o=${c%%:*}; d=${c#*:}
  REPO=$PWD timeout 120 ncu --clock-control none --cache-control none -k "regex:${o}_warp|triton" \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,lts__t_sectors_op_write.sum \
    --csv python3 dist/exp/variants.py --shapes 65536x512 --ops $o --dtypes $d --reps 3 --warmup 1 --backends rust-llvm --out $w/ncu-$o.json \
    base=$(j s-base) ef=$(j s-base)@dist/variant/ef/ptx > $w/ncu-$o-$d.csv 2> $w/ncu-$o-$d.err; p ncu-$o
done
cd $w && tar czf all.tgz --exclude=all.tgz . ; p done
