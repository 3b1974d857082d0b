#!/bin/bash
# RMSNorm's sum of squares by FMA (rustc's kernels: the PTX rust-cuda's compiler already writes)
# and LayerNorm's cluster asking the cluster's size of the cluster (no Seat::blocks), built
# together as dist/variant/ab (they change disjoint kernels), against 87ec3a1 (dist/): the
# driver's cluster placement by size (gpc.py); the GPU tests of ab; then, alternating twice,
# the lab's bench of RMSNorm (every schedule, both compilers) and LayerNorm's clusters, and the
# peers' rotation of RMSNorm (L2 dirty, torch.compile and Triton) at the five shorter shapes;
# last, ncu of rmsnorm_block_f32 (rustc) at 32768 x 1024 in both builds.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; w=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$w/gpu.txt"
timeout 60 python3 dist/exp/gpc.py dist/ptx/llvm/gpu_kernels.ptx.gz > "$w/gpc.txt" 2>&1
echo "gpc rc=$? t=$SECONDS" >> "$w/calls.log"
LAB_REQUIRE_GPU=1 timeout 90 dist/variant/ab/tests/gpu gpu_rows:: --test-threads=1 > "$w/tests-ab.txt" 2>&1
echo "tests ab rc=$? t=$SECONDS" >> "$w/calls.log"
rows=$(ls results/rows/87ec3a1/rows-nvidia-*.json)
for v in base ab base2 ab2; do
  p=dist/ptx lab=dist/lab
  [[ $v == ab* ]] && { p=dist/variant/ab/ptx; lab=dist/variant/ab/lab; }
  mkdir -p "$w/bench-$v" "$w/bench-ln-$v"
  timeout 90 $lab bench --kernel rmsnorm --backend llvm,nvvm --reps 20 --quiet \
    --out "$w/bench-$v" > "$w/bench-$v.txt" 2>&1
  echo "bench $v rc=$? t=$SECONDS" >> "$w/calls.log"
  timeout 60 $lab bench --kernel layernorm_cluster --backend llvm \
    --shape 4096x32768,1024x131072,256x262144 --reps 20 --quiet \
    --out "$w/bench-ln-$v" > "$w/bench-ln-$v.txt" 2>&1
  echo "bench-ln $v rc=$? t=$SECONDS" >> "$w/calls.log"
  timeout 90 python3 gpu/rows/peers.py --lab "$rows" --ptx $p --ops rmsnorm \
    --shapes 65536x512,32768x1024,16384x4096,8192x8192,4096x32768 --impls compile,triton \
    --reps 30 --out "$w/peers-$v.json" > "$w/peers-$v.txt" 2> "$w/peers-$v.log"
  echo "peers $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
for v in base ab; do
  lab=dist/lab; [[ $v == ab ]] && lab=dist/variant/ab/lab
  timeout 90 dist/xtask profile --lab $lab --kernel rmsnorm_block_f32 --backend llvm \
    --rows 32768 --cols 1024 --source --clock-control none \
    --output "$w/prof-$v" -q > "$w/profile-$v.txt" 2>&1
  echo "profile $v rc=$? t=$SECONDS" >> "$w/calls.log"
done
find "$w" -name '*.ncu-rep' -delete
cd "$w" && tar czf /tmp/call33.tgz . && mv /tmp/call33.tgz "$out/"; cat "$w/calls.log"
