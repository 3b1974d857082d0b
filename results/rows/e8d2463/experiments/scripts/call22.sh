#!/bin/bash
# Two experiments on e8d2463's dist/ and variants of its PTX, alternating, twice:
# 1. LayerNorm's clusters with the first loads of `b` it does not keep issued before the merge
#    (dist/variant/bm1: one vector, bm2: b_ahead's, bmall: all five (f32) or five (bf16)),
#    every variant's layernorm_cluster PTX given `.maxnreg 64` (two blocks of 512 or four of 256
#    an SM), in the lab's bench at 256 x 262144 and 1024 x 131072.
# 2. call 21 (results/rows/e8d2463/experiments/scripts/call21-not-run.sh): the warp kernels
#    with their weights loaded with the row (dist/variant/we) in the peers' rotation.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$w/gpu.txt"
for round in 1 2; do
  for v in base bm1 bm2 bmall; do
    lab=dist/lab; [[ $v != base ]] && lab=dist/variant/$v/lab
    mkdir -p "$w/ln-$v-$round"
    timeout 60 $lab bench --kernel layernorm_cluster --shape 256x262144,1024x131072 --reps 20 --quiet \
      --out "$w/ln-$v-$round" > "$w/ln-$v-$round.txt" 2>&1
    echo "ln $v $round rc=$? t=$SECONDS" >> "$w/calls.log"
  done
done
rows=$(ls results/rows/e8d2463/rows-nvidia-*.json)
python3 - "$rows" "$w/rows-scaled.json" <<'PY'
import copy, json, sys
doc = json.load(open(sys.argv[1]))
extra = []
for r in doc["rows"]:
    if r["rows"] == 65536 and r["cols"] == 512 and r.get("launch") and r.get("chosen"):
        for n in (32768, 131072):
            e = copy.deepcopy(r)
            e["rows"] = n
            e["launch"]["blocks"] = r["launch"]["blocks"] * n // 65536
            extra.append(e)
doc["rows"] += extra
json.dump(doc, open(sys.argv[2], "w"))
PY
for v in base we base2 we2; do
  p=dist/ptx; [[ $v == we* ]] && p=dist/variant/we/ptx
  timeout 120 python3 gpu/rows/peers.py --lab "$w/rows-scaled.json" --ptx $p --ops layernorm,rmsnorm \
    --shapes 32768x512,65536x512,131072x512,32768x1024 --impls compile --reps 30 \
    --out "$w/$v.json" > "$w/$v.txt" 2> "$w/$v.log"
  echo "peers $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call22.tgz . && mv /tmp/call22.tgz "$out/"; cat "$w/calls.log"
