#!/bin/bash
# Not run (the session's device time ran out): the warp kernels with their weights loaded with
# the row, before the merge, held in registers (dist/variant/we, variant-we.sh: fewer warps an
# SM, as Inductor's 63-74-register kernels), against e8d2463's as built, in the peers' rotation
# (L2 dirty), alternating twice: the norms at 32768, 65536 and 131072 rows of 512 (launches
# scaled from 65536 x 512, as call 18's; peers.py's table then fits each a fixed cost and a
# rate) and at 32768 x 1024. Run from the repo root with
# `bash dist/exp/call21-not-run.sh` (dist/ carried, this script copied into dist/exp/).
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
        for n in (32768, 131072):
            e = copy.deepcopy(r)
            e["rows"] = n
            e["launch"]["blocks"] = r["launch"]["blocks"] * n // 65536
            extra.append(e)
doc["rows"] += extra
json.dump(doc, open(sys.argv[2], "w"))
PY
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for v in base we base2 we2; do
  p=dist/ptx; [[ $v == we* ]] && p=dist/variant/we/ptx
  timeout 120 python3 gpu/rows/peers.py --lab "$w/rows-scaled.json" --ptx $p --ops layernorm,rmsnorm \
    --shapes 32768x512,65536x512,131072x512,32768x1024 --impls compile --reps 30 \
    --out "$w/$v.json" > "$w/$v.txt" 2> "$w/$v.log"
  echo "$v rc=$? t=$SECONDS" >> "$w/calls.log"
done
cd "$w" && tar czf /tmp/call21.tgz . && mv /tmp/call21.tgz "$out/"; cat "$w/calls.log"
