#!/bin/bash
# The twelve short cases in the peers' rotation: the warp kernels launched in blocks of 64
# threads (two rows, as the lab launches them) and of 32 (one row: at most 32 warps an SM, the
# SM's 32 blocks; Inductor's programs there are one warp), each with the row loads under
# evict_last (as built) and evict_normal (dist/variant/en); the L2 dirty (twice) and clean.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
rows=$(ls results/rows/979852d/rows-nvidia-*.json)
python3 - "$rows" "$w/rows-w32.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["rows"]:
    l = r.get("launch")
    if r["cols"] <= 1024 and r["schedule"] in ("warp", "narrow") and l:
        l["blocks"], l["threads"] = r["rows"], 32
json.dump(doc, open(sys.argv[2], "w"))
PY
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for l2 in dirty clean dirty2; do
  for v in base-64 en-64 base-32 en-32; do
    [[ $l2 == clean && $v == base* ]] && continue
    p=dist/ptx; [[ $v == en* ]] && p=dist/variant/en/ptx
    lab=$rows; [[ $v == *-32 ]] && lab=$w/rows-w32.json
    timeout 60 python3 gpu/rows/peers.py --lab "$lab" --ptx $p --l2 ${l2%2} --shapes 65536x512,32768x1024 \
      --impls compile --reps 30 --out "$w/$l2-$v.json" > "$w/$l2-$v.txt" 2> "$w/$l2-$v.log"
    echo "$l2 $v rc=$? t=$SECONDS" >> "$w/calls.log"
  done
done
cd "$w" && tar czf /tmp/call16.tgz . && mv /tmp/call16.tgz "$out/"; cat "$w/calls.log"
