#!/bin/bash
# call6's lp and the long rows' L2 variants in one call, cut to the cases each is for, for an H200
# that starts seldom (bo, whose compiler gap docs/part2.md explains from the SASS, left out): lp
# (LayerNorm's cluster holding two rows a block), ap (the wide block's and the clusters' rows
# demoted to the L2's normal priority once written) and af (the same rows marked first to go once
# merged, by one bulk prefetch under `evict_first`), each checked (lab run, the sanitizer's three
# tools), then the lab's bench of the clusters, base and the variants in turn, two rounds
# (gpu/rows/variants.sh); last, RMSNorm f32 at 4096 x 32768 in the peers' rotation beside
# torch.compile and the plain Triton kernel: base, then each of ap and af that passed its checks,
# then the same in reverse. About eight minutes by call6's and call7's step times.
# Arguments: the variants (default lp ap af; fewer where the call's time is short).
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}
names=("$@"); [[ $# -gt 0 ]] || names=(lp ap af)
bash gpu/rows/variants.sh --kernel layernorm_cluster,rmsnorm_cluster \
    --shape 4096x32768,1024x131072,256x262144 \
    --check 3x131072,1x262144,256x262144,7x131072,5x32768,2x32768 \
    --sanitize racecheck,synccheck,memcheck --tag call9 "${names[@]}"
w=$(mktemp -d); t0=$SECONDS
tar xzf "$out/variants-call9.tgz" -C "$w" --wildcards './bench-*-1/*' 2>/dev/null
rows=$(ls "$w"/bench-base-1/rows-*.json 2>/dev/null)
[[ -n $rows ]] || { echo "no bench of base: no rotation"; exit 0; }
# The L2 variants that passed their checks (each has a bench), in the rotation.
order=(base)
for v in ap af; do [[ -d $w/bench-$v-1 ]] && order+=("$v"); done
(( ${#order[@]} > 1 )) || { echo "no L2 variant passed: no rotation"; exit 0; }
for ((k = ${#order[@]} - 1; k >= 0; k--)); do order+=("${order[k]}"); done
i=0
for v in "${order[@]}"; do
    i=$((i + 1)); ptx=dist/ptx; [[ $v == base ]] || ptx=dist/variant/$v/ptx
    OUT=$w/peers-$i-$v timeout 60 bash gpu/rows/peers.sh --lab "$rows" --ptx "$ptx" \
        --ops rmsnorm --dtypes f32 --shapes 4096x32768 --impls compile,triton \
        > "$w/peers-$i-$v.log" 2>&1
    echo "peers $i $v rc=$? t=$((SECONDS - t0))s" | tee -a "$w/steps.log"
    tar czf "$out/call9-rotation.tgz" -C "$w" --exclude=peer-kernels.tgz .
done
grep -h "^rmsnorm" "$w"/peers-*/peers.txt | cut -c1-160
