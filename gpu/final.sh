#!/usr/bin/env bash
# One device call for a whole check, highest priority first, each part under its own time
# limit and packed into $OUT/<part>.tar.gz as soon as it ends (the device tool brings back at
# most 8 files; a part killed mid-way still leaves its folder).
#   PARTS="tests bench profile sanitize" DEADLINE=500 bash gpu/final.sh
#   BENCH_RUNS="--sweep|--size 2^20,2^30" STEPS="profile-v3 nsys" (passed to the parts)
set -uo pipefail
out=${OUT:-results/gpu-run}
mkdir -p "$out"; out=$(cd "$out" && pwd)
deadline=${DEADLINE:-540}
log=$out/final.log
say() { echo "$*" | tee -a "$log"; }
pack() { tar -C "$out" -czf "$out/$1.tar.gz" "$1" && rm -rf "${out:?}/$1"; }
left() { echo $((deadline - SECONDS)); }
for part in ${PARTS:-tests bench profile sanitize}; do
    budget=$(left)
    ((budget > 30)) || { say "$part: skipped, ${budget}s left"; continue; }
    mkdir -p "$out/$part"; start=$SECONDS
    case $part in
        tests)
            for t in dist/tests/*; do
                timeout $((budget / 2)) "$t" --test-threads=1 --nocapture >"$out/tests/$(basename "$t").log" 2>&1
                say "tests/$(basename "$t"): exit $?"
                budget=$(left)
            done ;;
        bench)
            # BENCH_RUNS: '|'-separated flag sets, one bench run each (default: one plain run).
            IFS='|' read -ra runs <<<"${BENCH_RUNS:- }"
            for r in "${runs[@]}"; do
                budget=$(left)
                # shellcheck disable=SC2086
                timeout $((budget < 240 ? budget : 240)) dist/xtask bench $r --out "$out/bench" >>"$out/bench/stdout.log" 2>&1
                say "bench $r: exit $?"
            done ;;
        profile)
            OUT=$out/profile STEPS="${STEPS:-ncu-table ncu-transpose}" STEP_TIMEOUT=$((budget / 2 - 10)) \
                timeout "$budget" bash gpu/profile.sh >"$out/profile/stdout.log" 2>&1
            say "profile: exit $?" ;;
        sanitize)
            timeout $((budget - 10)) dist/xtask sanitize --output "$out/sanitize" ${SANITIZE_FLAGS:-} >"$out/sanitize/stdout.log" 2>&1
            say "sanitize: exit $?" ;;
    esac
    say "$part: $((SECONDS - start)) s"
    pack "$part"
done
