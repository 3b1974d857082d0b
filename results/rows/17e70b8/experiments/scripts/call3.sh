#!/bin/bash
# Scratch experiment: the cluster kernels loading the next row while they write this one (pf:
# .maxnreg 64 on the cluster entries), against the build before (base).
set -u
w=$OUT; t0=$(date +%s)
p() { echo "$1 $(( $(date +%s) - t0 )) s" >> $w/progress.txt; }
lab() { if [ $1 = base ]; then echo dist/lab; else echo dist/variant/$1/lab; fi; }
K=softmax_cluster,rmsnorm_cluster,layernorm_cluster
S=4096x32768,1024x131072,256x262144
i=0
for v in base pf pf base; do
  i=$((i+1))
  $(lab $v) bench --kernel $K --shape $S --backend llvm --reps 20 --quiet --out $w/r$i-$v > $w/r$i-$v.txt 2>&1; p r$i-$v
done
cd $w && tar czf /tmp/all.tgz . && mv /tmp/all.tgz . ; p done
