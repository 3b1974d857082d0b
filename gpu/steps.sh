# shellcheck shell=bash disable=SC2154  # $out and $log: set by the script that sources this
# Sourced by the GPU machine's batch checks (rows.sh, faults-check.sh), after they set $out
# (the output folder, created) and $log (the batch's log in it):
#   batch_header TITLE   starts the log: TITLE, the build dist/ holds, the date, the GPU, lab info
#   step NAME LIMIT CMD  runs CMD within LIMIT seconds, its output into $out/NAME.txt and the log
#   batch_end TITLE      ends the log with PASSED (every step exited 0) or FAILED, and exits so
status=0
start=$SECONDS

batch_header() {
    {
        echo "# $1: $(head -2 dist/MANIFEST.txt 2>/dev/null | tr '\n' ' ')"
        echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
            --format=csv,noheader 2>&1 | sed 's/^/# gpu: /'
        dist/lab info
    } 2>&1 | tee "$log"
}

step() {
    local name=$1 limit=$2
    shift 2
    echo "== $name: $* (limit ${limit}s)" | tee -a "$log"
    local t0=$SECONDS
    timeout "$limit" "$@" 2>&1 | tee "$out/$name.txt" | tee -a "$log"
    local rc=${PIPESTATUS[0]}
    echo "== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$log"
    [[ $rc -eq 0 ]] || status=1
}

batch_end() {
    echo "$1: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $((SECONDS - start)) s" \
        | tee -a "$log"
    exit $status
}
