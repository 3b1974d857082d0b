#!/usr/bin/env bash
# The peers' rotation over row-kernel variants, after gpu/rows/variants.sh in the same device
# call, from the repository root on the GPU machine: base and each named variant that passed
# its checks there (it has a bench), then the same builds in reverse, each a run of
# gpu/rows/peers.sh with that build's PTX and the launches of base's first bench round, so that
# a drift of the GPU falls on both sides. The peers' flags after `--` (which ops, dtypes,
# shapes and implementations; `--lab-schedule`).
#
# Usage: bash gpu/rows/rotation.sh --from VARIANTS_TGZ --tag TAG NAME... -- PEERS_FLAGS...
# Writes $OUT/TAG-rotation.tgz (the peers' compiled kernels left out), packed again after every
# run, and prints each run's rows of the peers' table.
set -u
usage() { sed -n '/^# Usage:/,/^# Writes/p' "$0" | sed '$d; s/^# //' >&2; exit 2; }
from="" tag="" names=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --from) from=$2; shift 2 ;;
        --tag) tag=$2; shift 2 ;;
        --) shift; break ;;
        -h|--help) usage ;;
        -*) echo "error: unknown flag $1" >&2; usage ;;
        *) names+=("$1"); shift ;;
    esac
done
[[ -n $from && -n $tag && ${#names[@]} -gt 0 ]] || usage
out=${OUT:-/tmp/out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
w=$(mktemp -d); t0=$SECONDS
tar xzf "$from" -C "$w" --wildcards './bench-*-1/*' 2>/dev/null
rows=$(ls "$w"/bench-base-1/rows-*.json 2>/dev/null)
[[ -n $rows ]] || { echo "no bench of base in $from: no rotation"; exit 0; }
order=(base)
for v in "${names[@]}"; do [[ -d $w/bench-$v-1 ]] && order+=("$v"); done
(( ${#order[@]} > 1 )) || { echo "no variant of ${names[*]} passed its checks: no rotation"; exit 0; }
for ((k = ${#order[@]} - 1; k >= 0; k--)); do order+=("${order[k]}"); done
i=0
for v in "${order[@]}"; do
    i=$((i + 1)); ptx=dist/ptx; [[ $v == base ]] || ptx=dist/variant/$v/ptx
    OUT=$w/peers-$i-$v timeout 60 bash gpu/rows/peers.sh --lab "$rows" --ptx "$ptx" "$@" \
        > "$w/peers-$i-$v.log" 2>&1
    echo "peers $i $v rc=$? t=$((SECONDS - t0))s" | tee -a "$w/steps.log"
    tar czf "$out/$tag-rotation.tgz" -C "$w" --exclude=peer-kernels.tgz .
done
grep -hE "^(softmax|rmsnorm|layernorm) " "$w"/peers-*/peers.txt | cut -c1-160
