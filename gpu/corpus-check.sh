#!/usr/bin/env bash
# On the GPU machine, from the repository root with dist/ built by `cargo xtask dist`: the
# held-out corpora of gpu/corpus/ through the lab's own front end, both ways a user would take
# them, each graded against its truth file:
#   program   dist/xtask profile --cuda-profiler-range --launch-count 0 -- PROGRAM
#             (ncu --set full plus the lab's metrics, run by the lab)
#   report    plain `ncu --set full -o R PROGRAM` (no lab metrics), then
#             dist/xtask profile --report R.ncu-rep
#   graded    dist/xtask accuracy --truth gpu/corpus/<c>_corpus.truth.csv --document both JSONs
# and, first, the C++ corpus timed without a profiler (its twins' CUDA-event times).
#
#   OUT=DIR bash gpu/corpus-check.sh [cuda] [triton] [torch]      (all three when none is named)
#
# Writes $OUT/corpus-check.log, $OUT/corpus-check.tar.gz (the JSON documents, the graded
# tables, the timings; no reports) and exits non-zero when any kernel is missed.
set -uo pipefail
out=${OUT:?set OUT to the output folder}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$out/corpus-check.log
: >"$log"
say() { echo "$@" | tee -a "$log"; }
what=${*:-cuda triton torch}
ncu=${NCU:-$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
status=0
{
    echo "# gpu/corpus-check.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) $what; $(head -1 dist/MANIFEST.txt)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    echo "# ncu: $("$ncu" --version | tail -1)"
} 2>&1 | tee -a "$log"

say "+ nvcc -O3 -arch=sm_90 -lineinfo gpu/corpus/cuda_corpus.cu"
"$nvcc" -O3 -std=c++17 -arch=sm_90 -lineinfo -o "$work/cuda_corpus" gpu/corpus/cuda_corpus.cu \
    >"$work/cuda-build.log" 2>&1 || { say "  the C++ corpus did not build"; cat "$work/cuda-build.log"; exit 1; }

if [[ $what == *cuda* ]]; then
    say "+ cuda_corpus 20 (timed, no profiler)"
    "$work/cuda_corpus" 20 >"$work/cuda.times.csv" 2>>"$log" || status=1
    tee -a "$log" <"$work/cuda.times.csv"
fi

for c in $what; do
    case $c in
        cuda) program=("$work/cuda_corpus" --profile) ;;
        triton | torch) program=(python3 "gpu/corpus/${c}_corpus.py" --profile) ;;
        *) say "no corpus '$c': cuda, triton or torch"; exit 2 ;;
    esac
    say "+ [$SECONDS s] dist/xtask profile --cuda-profiler-range --launch-count 0 -- ${program[*]}"
    dist/xtask profile --cuda-profiler-range --launch-count 0 --output "$work/$c-program" \
        -- "${program[@]}" >"$work/$c-program.txt" 2>"$work/$c-program.err" || status=1
    say "+ [$SECONDS s] ncu --set full -o $c-plain ${program[*]}; dist/xtask profile --report"
    "$ncu" --clock-control none --target-processes all --profile-from-start off --set full -f \
        -o "$work/$c-plain" "${program[@]}" >"$work/$c-plain.ncu.log" 2>&1 || status=1
    dist/xtask profile --report "$work/$c-plain.ncu-rep" --output "$work/$c-report" \
        >"$work/$c-report.txt" 2>"$work/$c-report.err" || status=1
    docs=("$work/$c-program/profile-${c}_corpus.json" "$work/$c-report/profile-$c-plain.json")
    say "+ dist/xtask accuracy --truth gpu/corpus/${c}_corpus.truth.csv --document ${docs[*]##*/}"
    dist/xtask accuracy --truth "gpu/corpus/${c}_corpus.truth.csv" --document "${docs[@]}" \
        >"$work/$c-accuracy.txt" 2>&1 || status=1
    grep -E "^accuracy:|Faults named|MISS|All together|error" "$work/$c-accuracy.txt" | tee -a "$log"
done

say "corpus check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
tar -C "$work" -czf "$out/corpus-check.tar.gz" --exclude="*.ncu-rep" --exclude="cuda_corpus" \
    --exclude="*.raw.csv" --exclude="*source*.csv" .
exit $status
