#!/usr/bin/env bash
# Row-kernel variants (dist/variant/NAME, built here by scripts/variant.sh) timed against
# dist/'s build in one device call, from the repository root on the GPU machine.
#
# Each variant is checked first: `lab run` of the kernels at every --check shape (the lab
# compares every output with its CPU reference and exits non-zero on a wrong one), then each
# --sanitize tool at the first shape. A variant that fails or hangs a step takes no further
# part. Then the lab's bench of the kernels at the --shape list, dist/ and each variant in turn,
# for --rounds rounds, the order reversed every other round, so that a drift of the GPU's clocks
# or temperature falls on both sides. Last, variants.py's table: each build's x copy round by
# round, and each variant's change against dist/'s.
#
# Usage: bash gpu/rows/variants.sh --kernel K[,K] --shape RxC[,RxC] [--check RxC[,RxC]]
#            [--sanitize TOOL[,TOOL]] [--backend B[,B]] [--dtype D[,D]] [--rounds N]
#            [--tag TAG] NAME...
# Writes $OUT/variants-TAG.tgz (TAG defaults to the names joined by '-'), packed again after
# every step so that a call cut at its limit still brings back what ran, and prints the table.
set -u
usage() { sed -n '/^# Usage:/,/^# Writes/p' "$0" | sed '$d; s/^# //' >&2; exit 2; }
kernel="" shapes="" check="" sanitize="" backend=llvm,nvvm dtype=f32,bf16 rounds=2 tag=""
names=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --kernel) kernel=$2; shift 2 ;;
        --shape) shapes=$2; shift 2 ;;
        --check) check=$2; shift 2 ;;
        --sanitize) sanitize=$2; shift 2 ;;
        --backend) backend=$2; shift 2 ;;
        --dtype) dtype=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --tag) tag=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "error: unknown flag $1" >&2; usage ;;
        *) names+=("$1"); shift ;;
    esac
done
[[ -n $kernel && -n $shapes && ${#names[@]} -gt 0 ]] || usage
fail() { echo "error: $*" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || fail "--rounds $rounds: a whole number, 1 or more"
[[ -x dist/lab ]] || fail "no dist/lab: carry dist/ (cargo xtask dist, then scripts/variant.sh)"
for n in "${names[@]}"; do
    [[ -d dist/variant/$n/ptx ]] || fail "no dist/variant/$n/ptx (scripts/variant.sh builds it)"
done
# A kernels-only variant travels without a lab: dist/'s, beside its PTX, loads that PTX.
for n in "${names[@]}"; do
    [[ -x dist/variant/$n/lab ]] || cp dist/lab "dist/variant/$n/lab" ||
        fail "cannot copy dist/lab into dist/variant/$n"
done
tag=${tag:-$(IFS=-; echo "${names[*]}")}
# `lab run` takes one backend word where the bench takes a list.
case $backend in
    llvm|nvvm|nvcc) run_backend=$backend ;;
    llvm,nvvm|nvvm,llvm) run_backend=both ;;
    *) run_backend=all ;;
esac
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
out=${OUT:-/tmp/out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
w=$(mktemp -d); t0=$SECONDS
pack() { tar czf "$out/variants-$tag.tgz" -C "$w" .; }
log() { echo "$* t=$((SECONDS - t0))s" | tee -a "$w/steps.log"; pack; }
{ head -2 dist/MANIFEST.txt; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem \
    --format=csv,noheader; } > "$w/gpu.txt" 2>&1

# The checks: a variant leaves `live` at its first failed or hung step.
live=()
for n in "${names[@]}"; do
    lab=dist/variant/$n/lab ok=1
    for s in ${check//,/ }; do
        timeout 60 "$lab" run --kernel "$kernel" --backend "$run_backend" \
            --rows "${s%x*}" --cols "${s#*x}" >> "$w/run-$n.txt" 2>&1
        rc=$?; log "run $n $s rc=$rc"
        [[ $rc == 0 ]] || { ok=0; break; }
    done
    first=${check%%,*}
    for tool in ${sanitize//,/ }; do
        [[ $ok == 1 && -n $first ]] || break
        timeout 120 "$san" --tool "$tool" --error-exitcode 9 "$lab" run --kernel "$kernel" \
            --backend "$run_backend" --rows "${first%x*}" --cols "${first#*x}" \
            > "$w/sanitize-$n-$tool.txt" 2>&1
        rc=$?; log "sanitize $n $tool rc=$rc"
        [[ $rc == 0 ]] || ok=0
    done
    if [[ $ok == 1 ]]; then
        live+=("$n")
    else
        log "$n dropped: a check failed (run-$n.txt, sanitize-$n-*.txt)"
    fi
done

# The bench: base and the variants that passed, in turn, the order reversed every other round.
builds=(base "${live[@]}")
for r in $(seq 1 "$rounds"); do
    order=("${builds[@]}")
    if (( r % 2 == 0 )); then
        order=(); for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[i]}"); done
    fi
    for b in "${order[@]}"; do
        lab=dist/lab; [[ $b == base ]] || lab=dist/variant/$b/lab
        timeout 150 "$lab" bench --kernel "$kernel" --backend "$backend" --dtype "$dtype" \
            --shape "$shapes" --reps 20 --quiet --out "$w/bench-$b-$r" > "$w/bench-$b-$r.txt" 2>&1
        log "bench $b round $r rc=$?"
    done
done
python3 "$(dirname "$0")/variants.py" "$w" --builds "$(IFS=,; echo "${builds[*]}")" \
    | tee "$w/variants.txt"
pack
