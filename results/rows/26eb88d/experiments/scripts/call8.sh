#!/bin/bash
# The wide block's and the clusters' rows demoted from `evict_last` to `evict_normal` in the L2
# once written (ap: ap-row-lines-demoted.diff, `applypriority`), as torch.compile's second
# `evict_first` read of the row demotes it: checked (lab run, memcheck, racecheck), timed in the
# lab's bench against base (gpu/rows/variants.sh), then in the peers' rotation beside
# torch.compile at the rows those schedules take, base, ap, ap, base (the peers' verdict is the
# rotation's). About five and a half minutes by call3's and call6's steps.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}
shapes=4096x32768,1024x131072,256x262144
kernels=softmax_wide,rmsnorm_wide,layernorm_wide,softmax_cluster,rmsnorm_cluster,layernorm_cluster
bash gpu/rows/variants.sh --kernel "$kernels" \
    --shape "$shapes" --check 3x131072,1x262144,5x32768,7x4096 --sanitize memcheck,racecheck \
    --tag call8 ap
w=$(mktemp -d); t0=$SECONDS
tar xzf "$out/variants-call8.tgz" -C "$w" --wildcards '*bench-base-1/*' 2>/dev/null
rows=$(ls "$w"/bench-base-1/rows-*.json 2>/dev/null)
[[ -n $rows && -d dist/variant/ap ]] || { echo "no base bench or no variant: no rotation"; exit 0; }
i=0
for v in base ap ap base; do
    i=$((i + 1)); ptx=dist/ptx; [[ $v == ap ]] && ptx=dist/variant/ap/ptx
    OUT=$w/peers-$i-$v timeout 150 bash gpu/rows/peers.sh --lab "$rows" --ptx "$ptx" \
        --shapes "$shapes" --impls compile > "$w/peers-$i-$v.log" 2>&1
    echo "peers $i $v rc=$? t=$((SECONDS - t0))s" | tee -a "$w/steps.log"
    tar czf "$out/call8-rotation.tgz" -C "$w" --exclude=peer-kernels.tgz .
done
for f in "$w"/peers-*/peers.txt; do echo "== $f"; grep -E "^(softmax|rmsnorm|layernorm)" "$f" | cut -c1-120; done
