#!/bin/bash
# The twelve short cases (65536x512, 32768x1024) under three L2 policies on the row loads:
# evict_last (as built), evict_normal (dist/variant/en), evict_first (dist/variant/ef)
# (scripts/variants.sh: a sed of dist/ptx), alternating, twice: in the peers' rotation with the
# L2 clean and dirty (--impls compile) and in the lab's bench (--cache cold). Then the Triton
# code Inductor generates for two of the cases, for its loads' eviction policies.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
rows=$(ls results/rows/979852d/rows-nvidia-*.json)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
for v in base en ef base2 en2 ef2; do
  p=dist/ptx; lab=dist/lab
  case $v in en*|ef*) p=dist/variant/${v%2}/ptx lab=dist/variant/${v%2}/lab;; esac
  for l2 in clean dirty; do
    (( SECONDS > 420 )) && break 2
    timeout 70 python3 gpu/rows/peers.py --lab "$rows" --ptx $p --l2 $l2 --shapes 65536x512,32768x1024 \
      --impls compile --reps 30 --out "$w/$l2-$v.json" > "$w/$l2-$v.txt" 2> "$w/$l2-$v.log"
    echo "$l2 $v rc=$? t=$SECONDS" >> "$w/calls.log"
  done
  mkdir -p "$w/bench-$v"
  timeout 60 $lab bench --kernel rows --shape 65536x512,32768x1024 --cache cold --reps 20 --quiet \
    --out "$w/bench-$v" > "$w/bench-$v.txt" 2>&1
  echo "bench $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
mkdir -p "$w/inductor"
TORCHINDUCTOR_CACHE_DIR="$w/inductor/cache" timeout 90 python3 - > "$w/inductor/run.log" 2>&1 <<'PY'
import torch, torch.nn.functional as F
for dt, n in ((torch.float32, 512), (torch.bfloat16, 512)):
    x = torch.randn(65536, n, device="cuda", dtype=dt); wt = torch.randn(n, device="cuda", dtype=dt)
    b = torch.randn(n, device="cuda", dtype=dt)
    torch.compile(lambda x: F.layer_norm(x, (n,), wt, b, 1e-5), dynamic=False)(x)
    torch.compile(lambda x: F.rms_norm(x, (n,), wt, 1e-6), dynamic=False)(x)
    torch.compile(lambda x: F.softmax(x, dim=-1), dynamic=False)(x)
torch.cuda.synchronize(); print("ok")
PY
echo "inductor rc=$? t=$SECONDS" >> "$w/calls.log"
find "$w/inductor/cache" -name '*.py' | xargs grep -l "triton_" | head -20 | xargs -I{} cp {} "$w/inductor/" 2>/dev/null
rm -rf "$w/inductor/cache"
cd "$w" && tar czf /tmp/call15.tgz . && mv /tmp/call15.tgz "$out/"; cat "$w/calls.log"
