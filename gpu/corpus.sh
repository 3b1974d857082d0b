#!/usr/bin/env bash
# On the GPU machine: the held-out corpora of gpu/corpus/ (README.md there), with plain tools
# only (nvcc, ncu, python3; no lab binary), so the captures are what any user's would be:
#   cuda    gpu/corpus/cuda_corpus.cu, built here with nvcc -arch=sm_90 -lineinfo
#   triton  gpu/corpus/triton_corpus.py (Triton 3.6 and CuPy/NVRTC kernels)
#   torch   gpu/corpus/torch_corpus.py (PyTorch and cuBLAS kernels)
# For each: the timed run without a profiler (20 reps, CSV), then one launch per kernel
# (--profile) under ncu --set full twice: plain (what a user's report holds) and with the lab's
# diagnosis metrics. Each report is exported as its raw page (--page raw --csv --print-units
# base); the C++ one with the metrics also as its Source page (sass, and cuda,sass).
#
#   OUT=DIR bash gpu/corpus.sh [cuda] [triton] [torch]      (all three when none is named)
#
# Writes $OUT/corpus.tar (only gzipped CSVs and logs: times, raw and source pages, ncu and
# build logs) and $OUT/corpus.log; the .ncu-rep reports go to $REPORTS (default $OUT/reports).
# Each step runs under what is left of $DEADLINE_S (default 560 s) so the tarball is written
# before a 10-minute limit; a step cut short says so in the log.
set -uo pipefail
out=${OUT:?set OUT to the output folder}
mkdir -p "$out"
out=$(cd "$out" && pwd)
reports=${REPORTS:-$out/reports}
mkdir -p "$reports"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$out/corpus.log
: >"$log"
say() { echo "$@" | tee -a "$log"; }
what=${*:-cuda triton torch}
deadline=${DEADLINE_S:-560}
here=$(cd "$(dirname "$0")" && pwd)

ncu=${NCU:-$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
{
    echo "# gpu/corpus.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) $what"
    echo "# commit: $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader
    echo "# ncu: $ncu $("$ncu" --version | tail -1)"
    echo "# nvcc: $nvcc $("$nvcc" --version | tail -1)"
    python3 -c 'import torch, triton, cupy; print("# torch", torch.__version__, torch.version.cuda, "triton", triton.__version__, "cupy", cupy.__version__)'
} 2>&1 | tee -a "$log"

# The diagnosis metrics `--set full` lacks: the same list as gpu/foreign.sh's.
metrics=smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__thread_inst_executed_pred_on.sum
metrics+=,lts__t_requests_op_red.sum,lts__t_requests_op_red.max,lts__t_requests_op_atom.sum,lts__t_requests_op_atom.max
metrics+=,lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed,lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed
metrics+=,smsp__inst_executed_op_shared_ld_pred_on_any.sum,smsp__inst_executed_op_shared_st_pred_on_any.sum
metrics+=,smsp__inst_executed_op_shared_ld.sum,sm__sass_data_bytes_mem_global_op_ld.sum,sm__sass_data_bytes_mem_global_op_st.sum
metrics+=,sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_st.sum
ncu_full=("$ncu" --clock-control none --target-processes all --profile-from-start off --set full)

# step NAME COMMAND...: runs COMMAND with what is left of the deadline, its output to NAME.log,
# and logs its exit status and time.
step() {
    local name=$1 left=$((deadline - SECONDS))
    shift
    if ((left < 10)); then
        say "  SKIPPED $name: the deadline (${deadline} s) is spent"
        return 1
    fi
    say "+ [$SECONDS s] $name: $*"
    local t0=$SECONDS
    timeout "$left" "$@" >"$work/$name.log" 2>&1
    local rc=$?
    say "  exit $rc after $((SECONDS - t0)) s$([[ $rc -eq 124 ]] && echo ' (cut at the deadline)')"
    return $rc
}

# timed NAME COMMAND...: the timed run, stdout (the CSV) to NAME.times.csv, stderr to
# NAME.times.log.
timed() {
    local name=$1 left=$((deadline - SECONDS))
    shift
    if ((left < 10)); then
        say "  SKIPPED $name timed run: the deadline (${deadline} s) is spent"
        return 1
    fi
    say "+ [$SECONDS s] $name timed: $*"
    local t0=$SECONDS
    timeout "$left" "$@" >"$work/$name.times.csv" 2>"$work/$name.times.log"
    say "  exit $? after $((SECONDS - t0)) s"
    tee -a "$log" <"$work/$name.times.csv"
}

# page REPORT PAGE-ARGS...: exports a page of REPORT to stdout, within the deadline.
page() {
    local rep=$1 left=$((deadline - SECONDS))
    shift
    ((left >= 10)) && timeout "$left" "$ncu" --import "$reports/$rep.ncu-rep" "$@" 2>>"$log"
}

# capture STEM [NCU-ARGS...] COMMAND...: ncu --set full into $REPORTS/STEM, then its raw page.
capture() {
    local stem=$1
    shift
    step "$stem.ncu" "${ncu_full[@]}" -f -o "$reports/$stem" "$@"
    say "  $(grep -c '==PROF== Profiling' "$work/$stem.ncu.log") kernels profiled"
    [[ -f $reports/$stem.ncu-rep ]] || return 1
    page "$stem" --page raw --csv --print-units base >"$work/$stem.raw.csv"
}

if [[ $what == *cuda* ]]; then
    bin=$work/cuda_corpus
    step cuda-build "$nvcc" -O3 -arch=sm_90 -lineinfo -Xptxas -v -o "$bin" "$here/corpus/cuda_corpus.cu"
    if [[ -x $bin ]]; then
        timed cuda "$bin" 20
        capture cuda-plain "$bin" --profile
        capture cuda-metrics --metrics "$metrics" --import-source yes "$bin" --profile
        if [[ -f $reports/cuda-metrics.ncu-rep ]]; then
            for print in sass cuda,sass; do
                page cuda-metrics --page source --csv --print-source "$print" \
                    >"$work/cuda-metrics.source-${print/,/-}.csv"
            done
        fi
    fi
fi

for corpus in triton torch; do
    [[ $what == *$corpus* ]] || continue
    prog=$here/corpus/${corpus}_corpus.py
    timed "$corpus" python3 "$prog" 20
    capture "$corpus-plain" python3 "$prog" --profile
    capture "$corpus-metrics" --metrics "$metrics" python3 "$prog" --profile
done

say "# done after $SECONDS s"
ls -la "$work" "$reports" | tee -a "$log"
(cd "$work" && gzip -9 -f -- *.csv *.log)
tar -C "$work" -cf "$out/corpus.tar" --exclude=cuda_corpus .
ls -la "$out" | tee -a "$log"
