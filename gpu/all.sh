#!/usr/bin/env bash
# One device call: the GPU tests, the bench, the profiler captures and the sanitizer, each
# in its own folder, packed into one archive (the device tool brings back at most 8 files).
# Usage, from the repo root with dist/ built by `cargo xtask dist` (carry dist and .tools/debs):
#     PARTS="test bench profile sanitize" bash gpu/all.sh
# Per-part settings pass through: RUNS (bench), STEPS (profile), etc.
set -uo pipefail
out=${OUT:-results/gpu-run}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)/run
mkdir -p "$work"
summary=$out/summary.log
: >"$summary"
for part in ${PARTS:-test bench profile sanitize}; do
    mkdir -p "$work/$part"
    start=$SECONDS
    case $part in
        test) bash gpu/test.sh "$work/test" >"$work/test/stdout.log" 2>&1 ;;
        bench) OUT=$work/bench bash gpu/bench.sh "$work/bench" >"$work/bench/stdout.log" 2>&1 ;;
        profile) OUT=$work/profile bash gpu/profile.sh >"$work/profile/stdout.log" 2>&1 ;;
        sanitize) dist/xtask sanitize --output "$work/sanitize" >"$work/sanitize/stdout.log" 2>&1 ;;
        *) echo "unknown part $part" >>"$summary"; continue ;;
    esac
    rc=$?
    echo "$part: exit $rc in $((SECONDS - start)) s" | tee -a "$summary"
    tail -n 25 "$work/$part/stdout.log" | sed "s/^/  [$part] /" >>"$summary"
done
tar -C "$(dirname "$work")" -czf "$out/run.tar.gz" run
ls -la "$out"
