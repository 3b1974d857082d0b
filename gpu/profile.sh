#!/usr/bin/env bash
# On the GPU machine (H200): runs the profiling subcommands and captures what the
# tests need (ncu raw CSV pages, nsys stats CSVs) plus the outputs to commit.
#
# Run from the repository root, with dist/ holding lab and xtask (`cargo xtask dist`):
#     bash gpu/profile.sh
#
# It writes at most three files to $OUT (default results/gpu-profile):
#   profile-capture.tar.gz  unpack at the repository root (`tar xzf profile-capture.tar.gz`):
#                           xtask/tests/fixtures/ncu/*.raw.csv, *.launches.json  (ncu-table,
#                             ncu-transpose, and the --set full page of reduce_v3)
#                           xtask/tests/fixtures/nsys/nsys-*_<report>.csv
#                           results/profile/*.{txt,json,csv,log}  (the tables as printed)
#   profile-reports.tar.gz  results/profile/*.ncu-rep, *.nsys-rep for the GUIs (the largest
#                           reports are left out if the archive would pass 15 MiB)
#   profile.log             everything printed, step by step, and a summary
#
# Environment:
#   OUT           output folder (the device runner sets it)
#   STEPS         steps to run, default "ncu-table ncu-transpose profile-v3 profile-all nsys";
#                 also: ncu-table-nvcc, profile-2p28, progress-pty, nsys-pty (the last two
#                 under script(1), so the progress line draws as on a terminal)
#   STEP_TIMEOUT  seconds per step (default 420)
#   LIBDW_DEBS    folder with Debian's libdw1_*.deb and libelf1_*.deb for nsys's importer
#                 (default: the first of .tools/debs, dist/debs, gpu/debs holding them;
#                 `apt-get download libdw1 libelf1` on the CPU machine makes them)
#   NCU, NSYS     explicit profiler paths (else PATH, then /opt/nvidia/...)
#
# A step that fails with the NVTX selection is retried once with `--select launch-skip`.
# Exit status: 0 when every step succeeded.
set -uo pipefail

out=${OUT:-results/gpu-profile}
steps=${STEPS:-"ncu-table ncu-transpose profile-v3 profile-all nsys"}
step_timeout=${STEP_TIMEOUT:-420}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
res=$work/results/profile
mkdir -p "$res"
log=$out/profile.log
: >"$log"
say() { echo "$@" | tee -a "$log"; }
failed=()

[[ -x dist/xtask && -x dist/lab ]] || { say "error: dist/xtask and dist/lab are missing: run \`cargo xtask dist\` and copy dist/ here"; exit 2; }

# --- the machine -----------------------------------------------------------------------------
{
    echo "# gpu/profile.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    [[ -f dist/MANIFEST.txt ]] && sed 's/^/# dist: /' dist/MANIFEST.txt
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader 2>&1 | sed 's/^/# gpu: /'
} 2>&1 | tee -a "$log"

find_tool() { # name, env override, glob...
    local name=$1 env=$2; shift 2
    if [[ -n ${!env:-} ]]; then echo "${!env}"; return; fi
    command -v "$name" 2>/dev/null && return
    local g
    for g in "$@"; do
        # shellcheck disable=SC2086
        ls -d $g 2>/dev/null | sort -V | tail -1 | grep . && return
    done
}
ncu=$(find_tool ncu NCU '/opt/nvidia/nsight-compute/*/ncu' /usr/local/cuda/bin/ncu)
nsys=$(find_tool nsys NSYS '/opt/nvidia/nsight-systems/*/bin/nsys' '/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys' /usr/local/cuda/bin/nsys)
say "# ncu: ${ncu:-not found} $([[ -n $ncu ]] && "$ncu" --version 2>&1 | tail -1)"
say "# nsys: ${nsys:-not found} $([[ -n $nsys ]] && "$nsys" --version 2>&1 | tail -1)"
[[ -n $ncu ]] && export NCU=$ncu
[[ -n $nsys ]] && export NSYS=$nsys
dist/lab info 2>&1 | sed 's/^/# lab info: /' | tee -a "$log"
dist/lab run --list 2>&1 | sed 's/^/# lab run --list: /' | tee -a "$log"

# --- nsys's importer needs libdw.so.1 (gpu-machine.md) ----------------------------------------
nsys_env=()
if [[ -n $nsys ]] && ! ldconfig -p 2>/dev/null | grep -q 'libdw\.so\.1'; then
    debs=${LIBDW_DEBS:-}
    if [[ -z $debs ]]; then
        for d in .tools/debs dist/debs gpu/debs; do
            if compgen -G "$d/libdw1_*.deb" >/dev/null; then debs=$d; break; fi
        done
    fi
    if [[ -n $debs ]] && compgen -G "$debs/libdw1_*.deb" >/dev/null; then
        for deb in "$debs"/libdw1_*.deb "$debs"/libelf1_*.deb; do
            [[ -f $deb ]] && dpkg -x "$deb" "$work/libdw"
        done
        nsys_env=(env "LD_LIBRARY_PATH=$work/libdw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
        say "# nsys: libdw/libelf from $debs on LD_LIBRARY_PATH"
    else
        say "# nsys: no libdw.so.1 on this machine and no libdw1/libelf1 .deb found: the nsys step will say so"
    fi
fi

# --- the steps -------------------------------------------------------------------------------
run() { # step name, command...; output to the log and to results/profile/<name>.stdout
    local name=$1; shift
    say ""
    say "== $name: $*"
    local t0=$SECONDS
    timeout "$step_timeout" "$@" > >(tee "$res/$name.stdout" >>"$log") 2> >(tee -a "$log" >&2)
    local rc=$?
    say "== $name: exit $rc after $((SECONDS - t0)) s"
    return $rc
}

ncu_step() { # step name, xtask args...
    local name=$1; shift
    run "$name" dist/xtask "$@" --output "$res" && return 0
    say "== $name: retrying with --select launch-skip"
    run "$name" dist/xtask "$@" --output "$res" --select launch-skip && return 0
    failed+=("$name")
}

for step in $steps; do
    case $step in
        ncu-table) ncu_step ncu-table ncu-table ;;
        ncu-transpose) ncu_step ncu-transpose ncu-transpose ;;
        profile-v3) ncu_step profile-v3 profile --kernel reduce_v3 ;;
        profile-all) ncu_step profile-all profile --kernel all ;;
        # The chapter's kernels as nvcc compiles them, beside ncu-table's Rust rows.
        ncu-table-nvcc) ncu_step ncu-table-nvcc ncu-table --backend nvcc ;;
        # What stops the best reduction at 2^28: DRAM bytes and throughput of v7 and CUB.
        profile-2p28) ncu_step profile-2p28 profile --kernel v7,cub --size 268435456 --backend llvm ;;
        # The progress line as a terminal shows it (script(1) gives xtask a pty).
        progress-pty)
            run progress-pty script -qefc "dist/xtask profile --kernel reduce_v3,reduce_v6 --backend llvm --output $res/pty" "$res/progress-pty.typescript" || failed+=(progress-pty)
            ;;
        nsys-pty)
            run nsys-pty script -qefc "${nsys_env[*]} dist/xtask nsys --what launch-gap --output $res/pty" "$res/nsys-pty.typescript" || failed+=(nsys-pty)
            ;;
        nsys)
            run nsys "${nsys_env[@]}" dist/xtask nsys --output "$res" || failed+=(nsys)
            ;;
        *) say "unknown step '$step'"; failed+=("$step") ;;
    esac
done

# If an xtask ncu step failed both ways, keep one plain ncu capture to find out why.
if [[ ${#failed[@]} -gt 0 && -n $ncu && " ${failed[*]} " == *" ncu-table "* ]]; then
    say ""
    say "== fallback: plain ncu --set full of every kernel on llvm (for the fixtures)"
    timeout "$step_timeout" "$ncu" --set full --nvtx --nvtx-include 'kernel-lab@profile/' --clock-control none \
        --export "$res/fallback-full-all-llvm" --force-overwrite \
        dist/lab run --kernel all --backend llvm >>"$log" 2>&1
    "$ncu" --import "$res/fallback-full-all-llvm.ncu-rep" --page raw --csv --print-units base \
        --print-kernel-base function >"$res/fallback-full-all-llvm.raw.csv" 2>>"$log"
    say "== fallback: exit $?"
fi

# --- pack ------------------------------------------------------------------------------------
cap=$work/capture
mkdir -p "$cap/xtask/tests/fixtures/ncu" "$cap/xtask/tests/fixtures/nsys" "$cap/results/profile"
shopt -s nullglob
for f in "$res"/ncu-table-*.raw.csv "$res"/ncu-table-*.launches.json \
         "$res"/ncu-transpose-*.raw.csv "$res"/ncu-transpose-*.launches.json \
         "$res"/profile-reduce_v3-*.raw.csv "$res"/profile-reduce_v3-*.launches.json; do
    cp "$f" "$cap/xtask/tests/fixtures/ncu/"
done
for f in "$res"/nsys-*_*.csv; do cp "$f" "$cap/xtask/tests/fixtures/nsys/"; done
for f in "$res"/*.txt "$res"/*.json "$res"/*.csv "$res"/*.log "$res"/*.stdout "$res"/*.typescript; do
    cp "$f" "$cap/results/profile/"
done
tar czf "$out/profile-capture.tar.gz" -C "$cap" .

rep=$work/reports
mkdir -p "$rep/results/profile"
for f in "$res"/*.ncu-rep "$res"/*.nsys-rep; do cp "$f" "$rep/results/profile/"; done
limit=$((15 * 1024 * 1024))
while :; do
    tar czf "$out/profile-reports.tar.gz" -C "$rep" .
    size=$(stat -c %s "$out/profile-reports.tar.gz")
    ((size <= limit)) && break
    biggest=$(ls -S "$rep/results/profile" | head -1)
    [[ -z $biggest ]] && break
    say "# reports archive is $size bytes: leaving out $biggest ($(stat -c %s "$rep/results/profile/$biggest") bytes)"
    rm "$rep/results/profile/$biggest"
done

say ""
say "# files: $(cd "$out" && ls -l profile-capture.tar.gz profile-reports.tar.gz | awk '{print $9 " " $5}' | tr '\n' ' ')"
if [[ ${#failed[@]} -eq 0 ]]; then
    say "gpu/profile.sh: every step succeeded ($steps)"
else
    say "gpu/profile.sh: FAILED steps: ${failed[*]} (see profile.log)"
fi
rm -rf "$work"
[[ ${#failed[@]} -eq 0 ]]
