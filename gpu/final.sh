#!/usr/bin/env bash
# One device call for a whole check, highest priority first, each part under its own time
# limit and packed into $OUT/<part>.tar.gz as soon as it ends (the device tool brings back at
# most 8 files; a part killed mid-way still leaves its folder).
#   PARTS="tests bench profile sanitize" DEADLINE=500 bash gpu/final.sh
#   BENCH_RUNS="--sweep|--size 2^20,2^30" STEPS="profile-v3 nsys" (passed to the parts)
# Parts: tests bench profile sanitize, and harness (the plain CUDA C++ harness, dist/harness),
# placement (`lab placement`), atomics (ncu of v1/v4 with the result word in the fast and the
# slow group), launchgap (nsys of the harness's and the lab's back-to-back launches),
# model (the bench at the model check's sizes, then `xtask model-check`), cache (a hot and a
# cold sweep of v6, v7 and CUB with the plot), source (`profile --source` of reduce_v3 on every
# backend; source5: reduce_v5 on llvm), compare (v3 against v5, v4 on llvm against nvcc), nsys (`xtask nsys` with its
# per-range verdicts, and once without libdw to show the remedy line), faults (the fault
# catalogue: gpu/faults-check.sh), accuracy (`xtask accuracy` on both Rust compilers), program
# (PyTorch's kernels through `profile -- PROGRAM`, `profile --report` and `nsys -- PROGRAM`).
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
            export LAB_REQUIRE_GPU=1
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
        checks)
            # Refusals that must come before any work, timed; the launch-dominated headline.
            { time dist/lab run --kernel reduce_v1 --size 40000000000; } >"$out/checks/run-160GB.log" 2>&1
            say "checks run-160GB: $(grep -E '^(error|real)' "$out/checks/run-160GB.log" | tr '\n' ' ')"
            { time dist/lab bench --out /proc/nope; } >"$out/checks/bench-out-proc.log" 2>&1
            say "checks bench-out: $(grep -E '^(error|real)' "$out/checks/bench-out-proc.log" | tr '\n' ' ')"
            dist/lab bench --kernel transpose --transpose 3 --quiet >"$out/checks/transpose-3.txt" 2>&1
            say "checks transpose-3: exit $?" ;;
        harness)
            for m in "reduce 28 20" "placement 28 64 10" "launchgap 1000 20"; do
                timeout $(($(left) - 10)) dist/harness $m >"$out/harness/harness-${m%% *}.csv" 2>>"$out/harness/harness.log"
                say "harness $m: exit $?"
            done ;;
        placement)
            timeout $((budget - 10)) dist/lab placement --out "$out/placement/lab-placement.csv" \
                >"$out/placement/lab-placement.txt" 2>&1
            say "placement: exit $?" ;;
        atomics)
            ncu=${NCU:-$(ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)}
            # The atomic unit's counters; printed per L2 slice too (which slice takes the reds).
            metrics=gpu__time_duration.sum,sm__ctas_launched.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
            metrics+=,lts__t_requests_op_red.sum,lts__t_requests_op_red.max,lts__d_atomic_input_cycles_active.sum
            metrics+=,lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed,lts__cycles_elapsed.max
            metrics+=,lts__t_requests_srcunit_ltcfabric.sum,lts__ltcfabric2lts_cycles_active.max
            for choice in fast slow; do
                rep=$out/atomics/ncu-reduce-placement-$choice
                timeout $(($(left) / 2)) "$ncu" --clock-control none --nvtx --nvtx-include 'kernel-lab@profile/' \
                    --metrics "$metrics" --export "$rep" --force-overwrite \
                    dist/lab run --kernel reduce_v1,reduce_v4,reduce_v5 --backend llvm --size 268435456 \
                    --placement "$choice" >"$rep.log" 2>&1
                say "atomics $choice: exit $?"
                "$ncu" --import "$rep.ncu-rep" --page raw --csv --print-units base >"$rep.raw.csv" 2>>"$rep.log"
                "$ncu" --import "$rep.ncu-rep" --page raw --csv --print-units base \
                    --print-metric-instances values >"$rep.slices.csv" 2>>"$rep.log"
            done ;;
        launchgap)
            nsys=${NSYS:-$(ls -d /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort -V | tail -1)}
            libdw=$(mktemp -d)
            for deb in .tools/debs/libdw1_*.deb .tools/debs/libelf1_*.deb; do [[ -f $deb ]] && dpkg -x "$deb" "$libdw"; done
            export LD_LIBRARY_PATH=$libdw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
            # Untraced first, alternating, five rounds: host launch rates drift between runs,
            # so the two are compared within one round, not across runs.
            for round in 1 2 3 4 5; do
                dist/harness launchgap 1000 20 >>"$out/launchgap/alternating-harness.csv" 2>&1
                dist/lab bench --kernel bump --reps 20 --quiet --format csv >>"$out/launchgap/alternating-lab.csv" 2>&1
                say "launchgap round $round: $(tail -1 "$out/launchgap/alternating-harness.csv")"
            done
            for who in harness lab; do
                rep=$out/launchgap/nsys-$who
                case $who in
                    harness) cmd=(dist/harness launchgap 1000 5) ;;
                    lab) cmd=(dist/lab bench --kernel bump --reps 5 --quiet) ;;
                esac
                timeout 120 "$nsys" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none \
                    --force-overwrite true -o "$rep" "${cmd[@]}" >"$rep.log" 2>&1
                say "launchgap nsys $who: exit $?"
                timeout 120 "$nsys" stats --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_trace \
                    --format csv -o "$rep" "$rep.nsys-rep" >>"$rep.log" 2>&1
            done ;;
        model)
            timeout $((budget - 10)) dist/xtask bench --size 2^10,2^24,2^26,2^28,2^30 --transpose 4096,8192,16384 \
                --out "$out/model" >"$out/model/stdout.log" 2>&1
            say "model bench: exit $?"
            for f in "$out"/model/*.json; do
                dist/xtask model-check "$f" >"$out/model/model-check.txt" 2>&1
                say "model-check: exit $?"
            done ;;
        cache)
            timeout $((budget - 10)) dist/xtask bench --sweep --cache both --kernel reduce_v6,reduce_v7,cub \
                --plot "$out/cache/plots" --out "$out/cache" >"$out/cache/stdout.log" 2>&1
            say "cache sweep: exit $?" ;;
        source)
            timeout $((budget - 10)) dist/xtask profile --kernel reduce_v3 --source --backend llvm,nvcc,nvvm \
                --output "$out/source" >"$out/source/profile-reduce_v3-source.txt" 2>&1
            say "profile --source: exit $?" ;;
        source5)
            # reduce_v5's hot lines beside reduce_v3's (results/profile/source) for `compare`.
            timeout $((budget - 10)) dist/xtask profile --kernel reduce_v5 --source --backend llvm \
                --output "$out/source5" >"$out/source5/profile-reduce_v5-source.txt" 2>&1
            say "profile --source v5: exit $?"
            rm -f "$out"/source5/*.ncu-rep ;;
        compare)
            timeout $((budget / 2)) dist/xtask compare reduce_v3 reduce_v5 --output "$out/compare/reduce_v3-vs-reduce_v5" \
                --svg "$out/compare/reduce_v3-vs-reduce_v5.svg" >"$out/compare/reduce_v3-vs-reduce_v5.txt" 2>&1
            say "compare v3 v5: exit $?"
            timeout $(($(left) - 10)) dist/xtask compare reduce_v4 --backend llvm,nvcc --output "$out/compare/reduce_v4-llvm-vs-nvcc" \
                --svg "$out/compare/reduce_v4-llvm-vs-nvcc.svg" >"$out/compare/reduce_v4-llvm-vs-nvcc.txt" 2>&1
            say "compare v4 llvm nvcc: exit $?" ;;
        nsys)
            timeout 60 dist/xtask nsys --what launch-gap --output "$out/nsys/without-libdw" >"$out/nsys/without-libdw.txt" 2>&1
            say "nsys without libdw: exit $? ($(find "$out/nsys/without-libdw" -type f | wc -l) files left)"
            libdw=$(mktemp -d)
            for deb in .tools/debs/libdw1_*.deb .tools/debs/libelf1_*.deb; do [[ -f $deb ]] && dpkg -x "$deb" "$libdw"; done
            LD_LIBRARY_PATH=$libdw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
                timeout $((budget - 70)) dist/xtask nsys --output "$out/nsys" \
                --bench-args "bench --kernel reduce_v6,reduce_v7,cub --size 2^28" >"$out/nsys/nsys.txt" 2>&1
            say "nsys: exit $?"
            rm -f "$out"/nsys/*.sqlite ;;
        faults)
            # The fault catalogue's GPU tests, its lab run and its bench against the twins.
            timeout $((budget - 10)) bash gpu/faults-check.sh "$out/faults" >"$out/faults/stdout.log" 2>&1
            say "faults check: exit $?" ;;
        accuracy)
            # The diagnosis held to the catalogue's verdicts (ACCURACY_KERNELS, default the
            # fault catalogue) on both Rust compilers; the raw pages kept gzipped, no reports.
            timeout $((budget - 10)) dist/xtask accuracy --kernel "${ACCURACY_KERNELS:-faults}" --backend both \
                --output "$out/accuracy" >"$out/accuracy/accuracy-stdout.txt" 2>&1
            say "accuracy: exit $?"
            rm -f "$out"/accuracy/*.ncu-rep
            gzip -9n "$out"/accuracy/*.raw.csv ;;
        program)
            # PyTorch's and cuBLAS's kernels through the front end: profile -- PROGRAM, the
            # diagnosis of a plain `ncu --set full` report, and nsys -- PROGRAM.
            ncu=${NCU:-$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)}
            timeout $((budget / 3)) dist/xtask profile --cuda-profiler-range --launch-count 0 --output "$out/program/profile" \
                -- python3 gpu/torch_lab.py >"$out/program/profile-torch.txt" 2>&1
            say "profile -- torch: exit $?"
            timeout $(($(left) / 2)) "$ncu" --clock-control none --target-processes all --profile-from-start off --set full \
                --force-overwrite -o "$out/program/plain" python3 gpu/torch_lab.py >"$out/program/plain-ncu.log" 2>&1
            say "plain ncu torch: exit $?"
            dist/xtask profile --report "$out/program/plain.ncu-rep" >"$out/program/report-torch.txt" 2>&1
            say "profile --report plain: exit $?"
            libdw=$(mktemp -d)
            for deb in ${LIBDW_DEBS:-.tools/debs}/libdw1_*.deb ${LIBDW_DEBS:-.tools/debs}/libelf1_*.deb; do [[ -f $deb ]] && dpkg -x "$deb" "$libdw"; done
            LD_LIBRARY_PATH=$libdw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
                timeout $(($(left) - 10)) dist/xtask nsys --output "$out/program/nsys" -- python3 gpu/torch_lab.py \
                >"$out/program/nsys-torch.txt" 2>&1
            say "nsys -- torch: exit $?"
            rm -f "$out"/program/*.ncu-rep "$out"/program/*/*.ncu-rep "$out"/program/nsys/*.sqlite "$out"/program/nsys/*.nsys-rep
            find "$out/program" -name '*.raw.csv' -exec gzip -9n {} + ;;
        sanitize)
            timeout $((budget - 10)) dist/xtask sanitize --output "$out/sanitize" ${SANITIZE_FLAGS:-} >"$out/sanitize/stdout.log" 2>&1
            say "sanitize: exit $?" ;;
    esac
    say "$part: $((SECONDS - start)) s"
    pack "$part"
done
