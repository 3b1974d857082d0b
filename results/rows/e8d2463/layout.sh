#!/bin/bash
# Here, from the repo root: lay out the record.tgz that record.sh packed on the GPU machine as a
# record folder of results/rows/: the logs gzipped, the lab's results and the peers' files as
# they came, the table (text, JSON, plots) and what the peers' compiled kernels are.
# Usage: bash results/rows/e8d2463/layout.sh RECORD_TGZ results/rows/<commit>
set -eu
tgz=$1 dest=$2
x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
tar xzf "$tgz" -C "$x"
mkdir -p "$dest"
for f in gpu-tests lab-run; do gzip -c "$x/$f.txt" > "$dest/$f.txt.gz"; done
gzip -c "$x/rows.log" > "$dest/rows.log.gz"
cat "$x"/sanitize-*.txt | gzip -c > "$dest/sanitize.txt.gz"
for j in "$x"/nvidia-*.json; do gzip -c "$j" > "$dest/$(basename "$j").gz"; done
cp "$x"/nvidia-*.txt "$x"/rows-nvidia-*.json "$dest/"
cp "$x/peers/peers.json" "$x/peers/peers.txt" "$dest/"
if [[ -f $x/peers/peer-kernels.tgz ]]; then
    python3 gpu/rows/peer_kernels.py "$x/peers/peer-kernels.tgz" > "$dest/peer-kernels.txt"
fi
lab=$(ls "$dest"/rows-nvidia-*.json)
cargo xtask rows-table "$lab" --peers "$dest/peers.json" > "$dest/rows-table.txt"
cargo xtask rows-table "$lab" --peers "$dest/peers.json" --format json > "$dest/rows-table.json"
cargo xtask rows-table "$lab" --peers "$dest/peers.json" --plot "$dest/plots" > /dev/null
cat "$x/calls.log"
tail -2 "$dest/rows-table.txt"
