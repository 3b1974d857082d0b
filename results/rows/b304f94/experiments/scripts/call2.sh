#!/bin/bash
# RMSNorm's row read again from the L2 after the merge, as torch.compile's second pass reads it:
# rr under `evict_first` (torch.compile's policy for that read), rn under `evict_normal` (the
# same pacing, the lines' priority left as a plain hit leaves it). Each checked (lab run, the
# sanitizer's three tools), then the lab's bench of RMSNorm's clusters and wide block against
# base, two rounds (gpu/rows/variants.sh); last, RMSNorm f32 at 4096 x 32768 in the peers'
# rotation beside torch.compile and the plain Triton kernel: base, rr, rn, rn, rr, base. On an
# H200, LayerNorm's lp2 (758aa93/experiments) is checked and benched with them, its clusters
# beside. About eight minutes on an H200, five on any other GPU.
cd "$(dirname "$0")/../.." || exit
set -u
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
kernels=rmsnorm_cluster,rmsnorm_wide names=(rr rn)
if [[ $gpu == *H200* ]]; then kernels=layernorm_cluster,$kernels names=(lp2 rr rn); fi
bash gpu/rows/variants.sh --kernel "$kernels" \
    --shape 4096x32768,1024x131072,256x262144 \
    --check 3x131072,1x262144,256x262144,7x131072,5x32768,2x32768 \
    --sanitize racecheck,synccheck,memcheck --tag call2 "${names[@]}"
w=$(mktemp -d); t0=$SECONDS
tar xzf "$out/variants-call2.tgz" -C "$w" --wildcards './bench-*-1/*' 2>/dev/null
rows=$(ls "$w"/bench-base-1/rows-*.json 2>/dev/null)
[[ -n $rows ]] || { echo "no bench of base: no rotation"; exit 0; }
# The read-again variants that passed their checks (each has a bench), in the rotation.
order=(base)
for v in rr rn; do [[ -d $w/bench-$v-1 ]] && order+=("$v"); done
(( ${#order[@]} > 1 )) || { echo "no read-again variant passed: no rotation"; exit 0; }
for ((k = ${#order[@]} - 1; k >= 0; k--)); do order+=("${order[k]}"); done
i=0
for v in "${order[@]}"; do
    i=$((i + 1)); ptx=dist/ptx; [[ $v == base ]] || ptx=dist/variant/$v/ptx
    OUT=$w/peers-$i-$v timeout 60 bash gpu/rows/peers.sh --lab "$rows" --ptx "$ptx" \
        --ops rmsnorm --dtypes f32 --shapes 4096x32768 --impls compile,triton \
        > "$w/peers-$i-$v.log" 2>&1
    echo "peers $i $v rc=$? t=$((SECONDS - t0))s" | tee -a "$w/steps.log"
    tar czf "$out/call2-rotation.tgz" -C "$w" --exclude=peer-kernels.tgz .
done
grep -h "^rmsnorm" "$w"/peers-*/peers.txt | cut -c1-160
