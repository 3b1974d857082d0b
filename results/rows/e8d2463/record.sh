#!/bin/bash
# From the repo root on the GPU machine, with dist/ (cargo xtask dist) and .whl/ carried.
# The table of record: the row-wise batch (tests, lab run, bench, sanitizer), then the peers with
# the same Rust kernels in their rotation; everything in one tgz under $OUT.
set -u
out=${OUT:-/tmp/out}; w=$(mktemp -d)
bash gpu/rows.sh "$w" > /dev/null 2>&1; echo "rows rc=$? t=$SECONDS" >> "$w/calls.log"
mkdir -p "$w/peers"
OUT=$w/peers timeout 420 bash gpu/rows/peers.sh --lab "$(ls $w/rows-nvidia-*.json)" > "$w/peers.log" 2>&1
echo "peers rc=$? t=$SECONDS" >> "$w/calls.log"
cd "$w" && tar czf /tmp/record.tgz . && mv /tmp/record.tgz "$out/"; cat "$w/calls.log"; tail -5 "$w/rows.log"
