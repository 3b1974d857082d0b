#!/bin/bash
set -u
w=$OUT
lab() { if [ $1 = base ]; then echo dist/lab; else echo dist/variant/$1/lab; fi; }
t0=$(date +%s)
for r in 1 2; do for v in base lnf l1p; do
  $(lab $v) bench --kernel layernorm_cluster --shape 4096x32768,1024x131072,256x262144 --backend llvm --reps 20 --quiet --out $w/c$r-$v > $w/c$r-$v.txt 2>&1
  echo "c$r $v $(( $(date +%s) - t0 )) s" >> $w/progress.txt
done; done
K=softmax_warp,rmsnorm_warp,layernorm_warp,softmax_block,rmsnorm_block,layernorm_block
S=65536x512,32768x1024
for v in base s0 lnf; do
  $(lab $v) bench --kernel $K --shape $S --backend llvm --reps 20 --quiet --out $w/r$v > $w/r$v.txt 2>&1
done
echo "r $(( $(date +%s) - t0 )) s" >> $w/progress.txt
j() { ls $w/$1/rows-*.json | head -1; }
REPO=$PWD timeout 200 python3 dist/exp/variants.py --shapes $S --reps 40 --backends rust-llvm --out $w/rot.json \
  base=$(j rbase) s0=$(j rs0) lnf=$(j rlnf) > $w/rot.txt 2>&1
echo "rot $(( $(date +%s) - t0 )) s" >> $w/progress.txt
cd $w && tar czf all.tgz --exclude=all.tgz *
