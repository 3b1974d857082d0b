#!/bin/bash
# (1) ncu --set full over the peers' rotation at the short rows where the lab is furthest behind
#     torch.compile: LayerNorm f32 65536x512, RMSNorm bf16 65536x512, RMSNorm f32 32768x1024.
# (2) the peers' rotation with the short rows' chosen schedule replaced by block / wide.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
rows=$(ls results/rows/979852d/rows-nvidia-*.json)
site=$(mktemp -d)
python3 -m zipfile -e .whl/liger_kernel-0.8.5-py3-none-any.whl "$site"
python3 -c 'import packaging.version' 2>/dev/null || python3 -m zipfile -e .whl/packaging-26.4-py3-none-any.whl "$site"
export PYTHONPATH=$site
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt"
prof() { # name op dtype shape regex
  timeout 200 ncu --target-processes all --clock-control none --cache-control none --set full \
    -k "regex:$5" --launch-skip 20 --launch-count 9 -o "$out/$1" -f \
    python3 gpu/rows/peers.py --lab "$rows" --ptx dist/ptx --ops "$2" --dtypes "$3" --shapes "$4" --impls compile \
    --reps 20 --warmup 5 --out "$out/$1-peers.json" > "$out/$1.log" 2>&1
  echo "$1 ncu rc=$?" >> "$out/calls.log"
}
prof ln-f32-512 layernorm f32 65536x512 'layernorm|layer_norm'
prof rms-bf16-512 rmsnorm bf16 65536x512 'rmsnorm|rms_norm|red_fused|per_fused'
prof rms-f32-1024 rmsnorm f32 32768x1024 'rmsnorm|rms_norm|red_fused|per_fused'
for v in base block wide; do
  j=$rows; [[ $v != base ]] && j=dist/exp/rows-$v.json
  timeout 300 python3 gpu/rows/peers.py --lab "$j" --ptx dist/ptx --shapes 65536x512,32768x1024 --impls compile,triton \
    --reps 30 --out "$out/rot-$v.json" > "$out/rot-$v.txt" 2> "$out/rot-$v.log"
  echo "rot $v rc=$?" >> "$out/calls.log"
done
cd "$out" && tar czf /tmp/all.tgz *.log *.txt *.json && mv /tmp/all.tgz . ; ls -la
