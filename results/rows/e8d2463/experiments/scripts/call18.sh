#!/bin/bash
# Is the short rows' gap a fixed cost a launch (its start or its tail) or a rate? The Rust
# kernels of e8d2463 and torch.compile's in the peers' rotation (L2 dirty, the table's method) at
# 32768, 65536, 131072 and 262144 rows of 512, LayerNorm and RMSNorm, f32 and bf16: the rows
# file's launches at 65536 x 512 scaled to each count of rows (blocks = rows / 2). Twice.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; w=$(mktemp -d)
rows=$(ls results/rows/e8d2463/rows-nvidia-*.json)
python3 - "$rows" "$w/rows-scaled.json" <<'PY'
import copy, json, sys
doc = json.load(open(sys.argv[1]))
extra = []
for r in doc["rows"]:
    if r["rows"] == 65536 and r["cols"] == 512 and r.get("launch") and r.get("chosen"):
        for n in (32768, 131072, 262144):
            e = copy.deepcopy(r)
            e["rows"] = n
            e["launch"]["blocks"] = r["launch"]["blocks"] * n // 65536
            extra.append(e)
doc["rows"] += extra
json.dump(doc, open(sys.argv[2], "w"))
PY
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for run in 1 2; do
  timeout 200 python3 gpu/rows/peers.py --lab "$w/rows-scaled.json" --ptx dist/ptx --ops layernorm,rmsnorm \
    --shapes 32768x512,65536x512,131072x512,262144x512 --impls compile --reps 30 \
    --out "$w/scaled-$run.json" > "$w/scaled-$run.txt" 2> "$w/scaled-$run.log"
  echo "run $run rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call18.tgz . && mv /tmp/call18.tgz "$out/"; cat "$w/calls.log"
