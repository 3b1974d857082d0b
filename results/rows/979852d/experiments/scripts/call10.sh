#!/bin/bash
# Text out of ncu reports: ln-f32-512 (carried) and rms-bf16-512 (profiled again), details and raw
# pages as CSV and the lab's own reading (xtask profile --report).
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
rows=$(ls results/rows/979852d/rows-nvidia-*.json)
site=$(mktemp -d)
python3 -m zipfile -e .whl/liger_kernel-0.8.5-py3-none-any.whl "$site" >/dev/null
python3 -c 'import packaging.version' 2>/dev/null || python3 -m zipfile -e .whl/packaging-26.4-py3-none-any.whl "$site" >/dev/null
export PYTHONPATH=$site
cp dist/exp/ln-f32-512.ncu-rep "$w/"
timeout 200 ncu --target-processes all --clock-control none --cache-control none --set full \
    -k "regex:rmsnorm|rms_norm|red_fused|per_fused" --launch-skip 20 --launch-count 9 -o "$w/rms-bf16-512" -f \
    python3 gpu/rows/peers.py --lab "$rows" --ptx dist/ptx --ops rmsnorm --dtypes bf16 --shapes 65536x512 --impls compile \
    --reps 20 --warmup 5 --out "$w/rms-bf16-512-peers.json" > "$w/rms-bf16-512.log" 2>&1
for r in ln-f32-512 rms-bf16-512; do
  ncu --import "$w/$r.ncu-rep" --page details --csv > "$w/$r-details.csv" 2>&1
  ncu --import "$w/$r.ncu-rep" --page raw --csv > "$w/$r-raw.csv" 2>&1
  ncu --import "$w/$r.ncu-rep" --page source --csv --print-source sass > "$w/$r-sass.csv" 2>&1
  dist/xtask profile --report "$w/$r.ncu-rep" > "$w/$r-profile.txt" 2>&1
done
cd "$w" && rm -f *.ncu-rep && tar czf "$out/all.tgz" . ; ls -la "$w"
