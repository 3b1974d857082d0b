#!/bin/bash
# The peers' rotation with the L2 dirty (the fill's lines, as the table of record) and clean
# (the fill, then a read of twice the L2), alternating: the twelve short cases, then three long.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
rows=$(ls results/rows/979852d/rows-nvidia-*.json)
site=$(mktemp -d)
python3 -m zipfile -e .whl/liger_kernel-0.8.5-py3-none-any.whl "$site" >/dev/null
python3 -c 'import packaging.version' 2>/dev/null || python3 -m zipfile -e .whl/packaging-26.4-py3-none-any.whl "$site" >/dev/null
export PYTHONPATH=$site
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for v in dirty clean dirty2 clean2; do
  timeout 150 python3 gpu/rows/peers.py --lab "$rows" --ptx dist/ptx --l2 ${v%2} --shapes 65536x512,32768x1024 \
    --impls compile,triton --reps 30 --out "$w/short-$v.json" > "$w/short-$v.txt" 2> "$w/short-$v.log"
  echo "short $v rc=$?" >> "$w/calls.log"
done
for v in dirty clean; do
  timeout 120 python3 gpu/rows/peers.py --lab "$rows" --ptx dist/ptx --l2 $v --ops rmsnorm --dtypes f32 --shapes 4096x32768 \
    --impls compile,triton --reps 30 --out "$w/rms-long-$v.json" > "$w/rms-long-$v.txt" 2> "$w/rms-long-$v.log"
  timeout 120 python3 gpu/rows/peers.py --lab "$rows" --ptx dist/ptx --l2 $v --ops layernorm,softmax --shapes 256x262144 \
    --impls triton --reps 30 --out "$w/long-$v.json" > "$w/long-$v.txt" 2> "$w/long-$v.log"
  echo "long $v rc=$?" >> "$w/calls.log"
done
cd "$w" && tar czf "$out/all.tgz" . ; ls -la "$w"
