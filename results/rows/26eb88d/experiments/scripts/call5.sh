#!/bin/bash
# The CUDA C++ twin's block softmax held to 32 registers by __launch_bounds__(1024, 2) (nb)
# against as built (base: 36 in f32, 38 in bf16, one block of 1024 an SM), where the block
# schedule takes softmax: checked by lab run, then the lab's bench of the nvcc column (llvm's
# beside as the control), base and nb alternating (gpu/rows/variants.sh).
cd "$(dirname "$0")/../.." || exit
bash gpu/rows/variants.sh --kernel softmax_block --backend nvcc,llvm \
  --shape 32768x1024,16384x4096,8192x8192,4096x32768 --check 7x1024,3x16384 --tag call5 nb
