#!/bin/bash
# (1) DRAM bytes of each kernel in the peers' rotation, in the L2 state the rotation leaves (one-pass
#     metric set, --cache-control none): LayerNorm f32 and RMSNorm bf16 at 65536x512; the lab's
#     kernels as built (evict_last loads) and with evict_normal (dist/variant/en).
# (2) the rotation on the twelve short cases, base / en / base / en.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
rows=$(ls results/rows/979852d/rows-nvidia-*.json)
site=$(mktemp -d)
python3 -m zipfile -e .whl/liger_kernel-0.8.5-py3-none-any.whl "$site" >/dev/null
python3 -c 'import packaging.version' 2>/dev/null || python3 -m zipfile -e .whl/packaging-26.4-py3-none-any.whl "$site" >/dev/null
export PYTHONPATH=$site
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
for v in base en; do
  p=dist/ptx; [[ $v == en ]] && p=dist/variant/en/ptx
  for c in "layernorm f32" "rmsnorm bf16"; do
    set -- $c; n=$v-$1-$2
    timeout 150 ncu --target-processes all --clock-control none --cache-control none --metrics $m \
      --launch-skip 40 --launch-count 60 --csv --page raw \
      python3 gpu/rows/peers.py --lab "$rows" --ptx $p --ops $1 --dtypes $2 --shapes 65536x512 --impls compile \
      --reps 20 --out "$w/$n-peers.json" > "$w/$n-ncu.csv" 2> "$w/$n.log"
    echo "$n ncu rc=$?" >> "$w/calls.log"
  done
done
for v in base en base2 en2; do
  p=dist/ptx; [[ $v == en* ]] && p=dist/variant/en/ptx
  timeout 200 python3 gpu/rows/peers.py --lab "$rows" --ptx $p --shapes 65536x512,32768x1024 --impls compile,triton \
    --reps 30 --out "$w/rot-$v.json" > "$w/rot-$v.txt" 2> "$w/rot-$v.log"
  echo "rot $v rc=$?" >> "$w/calls.log"
done
cd "$w" && tar czf "$out/all.tgz" . ; ls -la "$w"
