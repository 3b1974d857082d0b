#!/usr/bin/env bash
# On the GPU machine (no cargo): the default bench and the size sweep, through dist/xtask
# (which runs dist/lab bench), results files under results/bench/, copied to the output folder.
# Usage, from the repo root with dist/ built by `cargo xtask dist`:  bash gpu/bench.sh [OUTDIR]
#   OUTDIR defaults to $OUT (the device tool's output folder), else results/bench.
#   Extra flags for every run: BENCH_FLAGS="--reps 30" bash gpu/bench.sh
#   Only some runs: RUNS=default bash gpu/bench.sh
set -uo pipefail
out=${1:-${OUT:-results/bench}}
mkdir -p "$out" results/bench
log=$out/bench.log
read -ra flags <<< "${BENCH_FLAGS:-}"
{
    echo "# bench: $(head -2 dist/MANIFEST.txt 2>/dev/null | tr '\n' ' ')"
    echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
        --format=csv,noheader 2>&1 | sed 's/^/# gpu: /'
} 2>&1 | tee "$log"

status=0
before=$(mktemp)
ls results/bench/*.json 2>/dev/null | sort >"$before"
for run in ${RUNS:-default sweep}; do
    args=()
    [[ $run == sweep ]] && args=(--sweep)
    echo "== dist/xtask bench ${args[*]} ${flags[*]}" | tee -a "$log"
    # The table goes to stdout (and the log); progress lines to stderr (the log too).
    dist/xtask bench "${args[@]}" "${flags[@]}" 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
    echo "== $run: exit $rc" | tee -a "$log"
    [[ $rc -eq 0 ]] || status=1
done

# The results files these runs wrote (JSON + the table as printed).
if [[ $(realpath "$out") != $(realpath results/bench) ]]; then
    ls results/bench/*.json 2>/dev/null | sort | comm -13 "$before" - | while read -r f; do
        cp "$f" "${f%.json}.txt" "$out/" && echo "copied $f (+ .txt) to $out" | tee -a "$log"
    done
fi
rm -f "$before"
echo "bench: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED)" | tee -a "$log"
exit $status
