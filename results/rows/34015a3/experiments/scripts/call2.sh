#!/bin/bash
# Where RMSNorm f32 at 4096 x 32768 waits: torch.compile's kernel (1.01 x copy in the peers'
# rotation, two passes over the row, the second from the L2) against the lab's cluster (0.97)
# and streamed block (the same two passes, 0.90 at b11491a), one launch each under ncu with
# per-instruction warp-state samples, from the repo root with dist/ carried (about two
# minutes). Keeps Inductor's generated kernel and its PTX beside the reports' CSVs, in
# $OUT/call2.tgz.
cd "$(dirname "$0")/../../../../.." || exit
set -u
out=${OUT:-/tmp/out}
w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$w/gpu.txt"
sections=(--section SpeedOfLight --section LaunchStats --section Occupancy
    --section MemoryWorkloadAnalysis --section WarpStateStats --section SourceCounters)
export TORCHINDUCTOR_CACHE_DIR=$w/inductor TRITON_CACHE_DIR=$w/triton
cat > "$w/compile.py" <<'PY'
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(4096, 32768, device="cuda")
w = torch.randn(32768, device="cuda")
f = torch.compile(lambda t: F.rms_norm(t, (32768,), w, eps=1e-6), dynamic=False)
for _ in range(3):
    f(x)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("measured")
f(x)
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
PY
timeout 240 ncu --clock-control none "${sections[@]}" --import-source no --nvtx \
    --nvtx-include "measured/" -o "$w/compile" python3 "$w/compile.py" > "$w/ncu-compile.log" 2>&1
echo "ncu compile rc=$?"
timeout 200 ncu --clock-control none "${sections[@]}" --import-source no --nvtx \
    --nvtx-include kernel-lab@profile/ -o "$w/lab" dist/lab run \
    --kernel rmsnorm_cluster_f32,rmsnorm_streamed_f32,rmsnorm_wide_f32 --backend both \
    --rows 4096 --cols 32768 > "$w/ncu-lab.log" 2>&1
echo "ncu lab rc=$?"
for r in compile lab; do
    [[ -f $w/$r.ncu-rep ]] || continue
    ncu --import "$w/$r.ncu-rep" --page source --csv --print-source sass > "$w/$r-sass.csv" 2>&1
    ncu --import "$w/$r.ncu-rep" --page raw --csv --print-units base > "$w/$r-raw.csv" 2>&1
    ncu --import "$w/$r.ncu-rep" --page details > "$w/$r-details.txt" 2>&1
    rm -f "$w/$r.ncu-rep"
done
gzip "$w"/*.csv
(cd "$w" && find inductor triton -type f \( -name '*.py' -o -name '*.ptx' -o -name '*.json' \) \
    -print0 2>/dev/null | tar czf kernels.tgz --null -T -)
rm -rf "$w/inductor" "$w/triton"
grep -h "Duration\|DRAM Throughput\|Registers Per\|Block Size" "$w"/*-details.txt | head -40
tar czf "$out/call2.tgz" -C "$w" .
