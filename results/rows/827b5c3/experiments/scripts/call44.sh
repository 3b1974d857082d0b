#!/bin/bash
# The table of record at the commit in dist/MANIFEST.txt (827b5c3; results/rows/e8d2463/record.sh).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out} bash results/rows/e8d2463/record.sh
