#!/bin/bash
# call4.sh on an H200 alone: the table of record with a55f2e6's dist/; on any other GPU it says
# so and stops, so that a start that brings an H100 costs only the start.
cd "$(dirname "$0")/../../../../.." || exit
set -u
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
[[ $gpu == *H200* ]] || { echo "not an H200 ($gpu): nothing run"; exit 3; }
bash "$(dirname "$0")/call4.sh"
