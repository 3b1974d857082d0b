#!/bin/bash
# nsys over the peers' rotation (short rows): each timed kernel's duration and its gap after the
# kernel before it, to place the ~1.5 us the Rust kernels lose to torch.compile's there.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
rows=$(ls results/rows/979852d/rows-nvidia-*.json)
site=$(mktemp -d)
python3 -m zipfile -e .whl/liger_kernel-0.8.5-py3-none-any.whl "$site" >/dev/null
python3 -c 'import packaging.version' 2>/dev/null || python3 -m zipfile -e .whl/packaging-26.4-py3-none-any.whl "$site" >/dev/null
export PYTHONPATH=$site
for d in dist/exp/debs/*.deb; do dpkg -x "$d" "$w/libdw"; done
nsys=$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys | head -1)
export LD_LIBRARY_PATH=$w/libdw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for c in "layernorm f32 65536x512" "rmsnorm bf16 65536x512" "softmax f32 32768x1024"; do
  set -- $c; n=$1-$2-$3
  timeout 200 "$nsys" profile --trace=cuda --sample=none --cpuctxsw=none -o "$w/$n" -f true \
    python3 gpu/rows/peers.py --lab "$rows" --ptx dist/ptx --ops $1 --dtypes $2 --shapes $3 --impls compile \
    --reps 30 --out "$w/$n-peers.json" > "$w/$n.log" 2>&1
  echo "$n rc=$?" >> "$w/calls.log"
  "$nsys" stats --report cuda_gpu_trace,cuda_api_trace --format csv -o "$w/$n" "$w/$n.nsys-rep" >> "$w/$n.log" 2>&1
done
cd "$w" && rm -rf libdw *.nsys-rep *.sqlite && gzip -f *.csv && tar czf "$out/all.tgz" . ; ls -la "$w"
