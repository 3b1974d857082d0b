#!/usr/bin/env bash
# On the GPU machine (no network): unpack Liger-Kernel (and `packaging`, which it imports, when
# python3 lacks it) from the carried .whl/ folder, then run peers.py; the JSON, the table and
# the progress log land in the output folder.
# Usage, from the repo root with .whl/ carried:  bash gpu/rows/peers.sh [peers.py flags]
#   Output folder: $OUT (the device tool's), else results/rows.  e.g. bash gpu/rows/peers.sh --quick
#   With the lab's kernels in the same rotation (after `bash gpu/rows.sh DIR` in the same call):
#     bash gpu/rows/peers.sh --lab DIR/rows-*.json
set -uo pipefail
out=${OUT:-results/rows}
mkdir -p "$out" && out=$(cd "$out" && pwd)
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT

# Pure-Python wheels are zip files: unpacked onto PYTHONPATH they import, with their metadata.
unpack() { python3 -m zipfile -e "$1" "$site" && echo "unpacked $(basename "$1")"; }
liger=.whl/liger_kernel-0.8.5-py3-none-any.whl
if [[ -f $liger ]]; then
    unpack "$liger"
    if ! python3 -c 'import packaging.version' 2>/dev/null; then
        for w in .whl/packaging-*-py3-none-any.whl; do [[ -f $w ]] && unpack "$w"; done
    fi
else
    echo "warning: $liger not found: the liger rows will say so (carry .whl/, see gpu/rows/README.md)" >&2
fi

# Inductor and Triton compile into fresh caches of this run's own, whose readable part (the
# generated kernels, the configs autotuning chose, each compile's PTX and launch facts) is kept as
# peer-kernels.tgz: `python3 gpu/rows/peer_kernels.py peer-kernels.tgz` reads it anywhere.
kernels=$site/kernels
export TORCHINDUCTOR_CACHE_DIR=$kernels/inductor TRITON_CACHE_DIR=$kernels/triton

# The table (stdout) to peers.txt, the progress lines (stderr) to peers.log.
PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" python3 gpu/rows/peers.py --out "$out/peers.json" "$@" \
    2> >(tee "$out/peers.log" >&2) | tee "$out/peers.txt"
rc=${PIPESTATUS[0]}
if [[ -d $kernels ]]; then
    (cd "$kernels" && find . -type f \( -name '*.py' -o -name '*.best_config' -o -name '*.json' \
        -o -name '*.ptx' -o -name '*.ttgir' \) -print0 | tar czf "$out/peer-kernels.tgz" --null -T -) ||
        echo "warning: the peers' kernels were not kept ($out/peer-kernels.tgz)" >&2
fi
exit "$rc"
