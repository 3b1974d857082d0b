#!/usr/bin/env bash
# Step-by-step GPU check that streams every log straight into $OUT, each step under a time
# limit, so a hang shows where it is and the rest still runs.
set -uo pipefail
out=${OUT:-results/diag}
mkdir -p "$out"
step() { # name, seconds, command...
    local name=$1 secs=$2; shift 2
    echo "== $name ($(date -u +%T))" >>"$out/diag.log"
    timeout "$secs" "$@" >>"$out/$name.log" 2>&1
    echo "== $name: exit $? ($(date -u +%T))" >>"$out/diag.log"
}
step info 60 dist/lab info
step run-small 90 dist/lab run --kernel all,bump --size 257 --rows 33 --cols 31
for t in dist/tests/*; do
    step "test-$(basename "$t")" "${TEST_SECS:-150}" "$t" --test-threads=1 --nocapture
done
