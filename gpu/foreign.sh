#!/usr/bin/env bash
# On the GPU machine: captures kernels the lab did not build, for checking the diagnosis on
# them. Plain ncu and nsys commands (no lab, no xtask), so the captures are what any user's
# would be:
#   faults    FAULTS_LAB (default dist/faults_lab, built from gpu/faults_lab.cu with -lineinfo):
#             timed without a profiler first (CSV), then every kernel's profiled launch under
#             ncu --set full plus the diagnosis metrics, with its source imported
#   torch     gpu/torch_lab.py (PyTorch's and cuBLAS's kernels) under the same ncu command,
#             again under plain `ncu --set full` (a report made without this lab's metrics),
#             and under nsys
# Each ncu report is exported as its raw page (--page raw --csv --print-units base) and,
# for faults, its Source page (sass, and cuda,sass); nsys's as `nsys stats` CSVs.
#
#   OUT=DIR bash gpu/foreign.sh [faults] [torch]      (both when none is named)
#
# Writes $OUT/foreign.tar.gz (every file above but the reports themselves) and $OUT/foreign.log.
set -uo pipefail
out=${OUT:?set OUT to the output folder}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
log=$out/foreign.log
: >"$log"
say() { echo "$@" | tee -a "$log"; }
what=${*:-faults torch}
faults_lab=${FAULTS_LAB:-dist/faults_lab}

ncu=${NCU:-$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)}
nsys=${NSYS:-$(command -v nsys || ls -d /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort -V | tail -1)}
{
    echo "# gpu/foreign.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) $what"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader
    echo "# ncu: $ncu $("$ncu" --version | tail -1)"
    echo "# nsys: $nsys"
    python3 -c 'import torch; print("# torch", torch.__version__, torch.version.cuda)'
} 2>&1 | tee -a "$log"

# The diagnosis metrics `--set full` lacks (profiler::ncu::metrics::DIAGNOSIS and the
# coalescing rule's SASS-level bytes and sectors).
metrics=smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__thread_inst_executed_pred_on.sum
metrics+=,lts__t_requests_op_red.sum,lts__t_requests_op_red.max
metrics+=,lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed,lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed
metrics+=,smsp__inst_executed_op_shared_ld_pred_on_any.sum,smsp__inst_executed_op_shared_st_pred_on_any.sum
metrics+=,smsp__inst_executed_op_shared_ld.sum,sm__sass_data_bytes_mem_global_op_ld.sum,sm__sass_data_bytes_mem_global_op_st.sum
metrics+=,sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_st.sum
ncu_full=("$ncu" --clock-control none --target-processes all --profile-from-start off --set full)

# ncu REPORT_STEM ARGS...: profile, then export the raw page.
capture() {
    local stem=$1; shift
    say "+ ncu ... -o $stem $*"
    "${ncu_full[@]}" "$@" >"$work/$stem.ncu.log" 2>&1
    say "  exit $? ($(grep -c '==PROF== Profiling' "$work/$stem.ncu.log") kernels profiled)"
    "$ncu" --import "$work/$stem.ncu-rep" --page raw --csv --print-units base \
        >"$work/$stem.raw.csv" 2>>"$log"
}

if [[ $what == *faults* ]]; then
    say "+ $faults_lab 20 (timed, no profiler)"
    "$faults_lab" 20 >"$work/faults-times.csv" 2>>"$log"
    say "  exit $?"; cat "$work/faults-times.csv" | tee -a "$log"
    capture faults --metrics "$metrics" --import-source yes -o "$work/faults" "$faults_lab" 1
    for print in sass cuda,sass; do
        "$ncu" --import "$work/faults.ncu-rep" --page source --csv --print-source "$print" \
            >"$work/faults.source-${print/,/-}.csv" 2>>"$log"
    done
fi

if [[ $what == *torch* ]]; then
    say "+ python3 gpu/torch_lab.py (no profiler)"
    python3 gpu/torch_lab.py 2>&1 | tee -a "$log"
    capture torch --metrics "$metrics" -o "$work/torch" python3 gpu/torch_lab.py
    capture torch-plain -o "$work/torch-plain" python3 gpu/torch_lab.py
    # nsys's importer needs libdw.so.1: Debian's, carried in LIBDW_DEBS (gpu-machine.md).
    if [[ -n ${LIBDW_DEBS:-} ]] && ! ldconfig -p | grep -q 'libdw\.so\.1'; then
        for d in "$LIBDW_DEBS"/libdw1_*.deb "$LIBDW_DEBS"/libelf1_*.deb; do dpkg -x "$d" "$work/libdw"; done
        export LD_LIBRARY_PATH=$work/libdw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
    say "+ nsys profile --trace=cuda,nvtx --sample=none --cpuctxsw=none -o torch python3 gpu/torch_lab.py"
    "$nsys" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --force-overwrite true \
        -o "$work/torch-nsys" python3 gpu/torch_lab.py >"$work/torch-nsys.log" 2>&1
    say "  exit $?"
    "$nsys" stats --report cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum,nvtx_pushpop_trace,cuda_gpu_trace,cuda_api_trace \
        --format csv --force-export true -o "$work/torch-nsys" "$work/torch-nsys.nsys-rep" >>"$work/torch-nsys.log" 2>&1
    say "  stats exit $?"
fi

ls -la "$work" | tee -a "$log"
tar -C "$work" -czf "$out/foreign.tar.gz" --exclude=libdw --exclude="*.ncu-rep" --exclude="*.nsys-rep" --exclude="*.sqlite" .
ls -la "$out" | tee -a "$log"
