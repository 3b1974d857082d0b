#!/bin/bash
# The variants calls 9, 12 and 15 load, made on the CPU machine from the repo root after
# `cargo xtask dist` (979852d's build):
#   dist/exp/rows-{block,wide}.json  979852d's rows file with the block (or wide) schedule marked
#                                    chosen for every case of 512 and 1024 columns where the lab
#                                    ran it: the peers' rotation then launches that schedule
#   dist/variant/{en,ef}/{lab,MANIFEST.txt,ptx}
#                                    dist/ptx with every createpolicy ... evict_last made
#                                    evict_normal (en) or evict_first (ef) (only the row kernels
#                                    create a policy), beside a copy of the lab, which loads the
#                                    PTX beside it
set -eu
mkdir -p dist/exp
python3 - <<'PY'
import glob, json
src = glob.glob("results/rows/979852d/rows-nvidia-*.json")[0]
for alt in ("block", "wide"):
    doc = json.load(open(src))
    ran = {(r["op"], r["rows"], r["cols"], r["dtype"], r["implementation"])
           for r in doc["rows"] if r["schedule"] == alt and "launch" in r}
    for r in doc["rows"]:
        key = (r["op"], r["rows"], r["cols"], r["dtype"], r["implementation"])
        if r["cols"] <= 1024 and key in ran:
            r["chosen"] = r["schedule"] == alt
    json.dump(doc, open(f"dist/exp/rows-{alt}.json", "w"))
PY
for v in en:evict_normal ef:evict_first; do
    name=${v%%:*} policy=${v#*:}
    mkdir -p dist/variant/$name
    rm -rf dist/variant/$name/ptx && cp -r dist/ptx dist/lab dist/MANIFEST.txt dist/variant/$name/
    for c in llvm nvvm; do
        zcat "dist/ptx/$c/gpu_kernels.ptx.gz" |
            sed "s/createpolicy.fractional.L2::evict_last.b64/createpolicy.fractional.L2::$policy.b64/" |
            gzip > "dist/variant/$name/ptx/$c/gpu_kernels.ptx.gz"
    done
done
