#!/bin/bash
set -u
w=$OUT
lab() { if [ $1 = base ]; then echo dist/lab; else echo dist/variant/$1/lab; fi; }
t0=$(date +%s)
for r in 1 2; do for v in base hint rcp rh rhb rhp; do
  [ $(( $(date +%s) - t0 )) -gt 480 ] && break
  $(lab $v) bench --kernel softmax_cluster,rmsnorm_cluster,layernorm_cluster --shape 4096x32768,1024x131072,256x262144 --backend llvm --reps 20 --quiet --out $w/c$r-$v > $w/c$r-$v.txt 2>&1
  echo "c$r $v $(( $(date +%s) - t0 )) s" >> $w/progress.txt
done; done
cd $w && tar czf all.tgz --exclude=all.tgz *
