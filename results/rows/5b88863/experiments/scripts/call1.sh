#!/bin/bash
# Scratch experiment: warp-schedule variants (base, h8, h4, s0) and LayerNorm bf16's FMA output (lnf).
set -u
w=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $w/gpu.txt 2>&1
K=softmax_warp,rmsnorm_warp,layernorm_warp,softmax_block,rmsnorm_block,layernorm_block
S=65536x512,32768x1024
lab() { if [ $1 = base ]; then echo dist/lab; else echo dist/variant/$1/lab; fi; }
t0=$(date +%s)
for v in base h8 h4 s0; do
  $(lab $v) bench --kernel $K --shape $S --backend llvm,nvvm --reps 20 --quiet --out $w/r1-$v > $w/r1-$v.txt 2>&1
  echo "r1 $v $(( $(date +%s) - t0 )) s" >> $w/progress.txt
done
for v in base lnf; do
  $(lab $v) bench --kernel layernorm_warp,layernorm_block,layernorm_wide,layernorm_cluster --shape 65536x512,16384x4096,1024x131072,256x262144 --dtype bf16 --backend llvm --reps 20 --quiet --out $w/ln1-$v > $w/ln1-$v.txt 2>&1
  echo "ln1 $v $(( $(date +%s) - t0 )) s" >> $w/progress.txt
done
j() { ls $w/$1/rows-*.json | head -1; }
REPO=$PWD timeout 280 python3 dist/exp/variants.py --shapes $S --reps 30 --backends rust-llvm --out $w/rot.json \
  base=$(j r1-base) h8=$(j r1-h8) h4=$(j r1-h4) s0=$(j r1-s0) lnf=$(j ln1-lnf) > $w/rot.txt 2>&1
echo "rot $(( $(date +%s) - t0 )) s" >> $w/progress.txt
for v in h8 base lnf; do
  [ $(( $(date +%s) - t0 )) -gt 520 ] && break
  if [ $v = lnf ]; then
    $(lab $v) bench --kernel layernorm_cluster --shape 1024x131072,256x262144 --dtype bf16 --backend llvm --reps 20 --quiet --out $w/ln2-$v > $w/ln2-$v.txt 2>&1
  else
    $(lab $v) bench --kernel $K --shape $S --backend llvm --reps 20 --quiet --out $w/r2-$v > $w/r2-$v.txt 2>&1
  fi
  echo "r2 $v $(( $(date +%s) - t0 )) s" >> $w/progress.txt
done
