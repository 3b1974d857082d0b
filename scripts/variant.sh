#!/usr/bin/env bash
# A variant to time beside dist/ in the same device call, built here from the repo root after
# `cargo xtask dist`: dist/variant/NAME holds a ptx/ built from the tree with PATCH applied (the
# patch is taken back out afterwards, on failure too) and its MANIFEST.txt. A patch
# inside gpu-kernels/ changes kernels only: the variant rebuilds the llvm, nvvm and nvcc PTX
# (under a minute) and holds no lab, gpu/rows/variants.sh copying dist/'s beside its PTX on the
# GPU machine (1.6 MB travel, not 6). A patch outside it changes the host too: the variant is
# `cargo xtask dist` of the patched tree, of which it keeps the lab, MANIFEST.txt and ptx/
# (about four minutes; 6 MB, not dist/'s 19). Either way the lab loads the PTX beside it, so
# `dist/variant/NAME/lab bench ...` runs the variant; on the GPU machine, gpu/rows/variants.sh
# checks it and times it against dist/'s build.
# Usage: bash scripts/variant.sh NAME PATCH     (then carry dist, which holds it)
set -euo pipefail
if [[ $# -ne 2 ]]; then
    echo "usage: bash scripts/variant.sh NAME PATCH (from the repo root, after cargo xtask dist)" >&2
    exit 2
fi
name=$1 patch=$2
[[ $name =~ ^[A-Za-z0-9_-]+$ ]] || { echo "error: NAME $name: letters, digits, '-' and '_' only" >&2; exit 2; }
[[ -f $patch ]] || { echo "error: no patch $patch" >&2; exit 2; }
[[ -f dist/lab && -f dist/MANIFEST.txt ]] ||
    { echo "error: no dist/lab: run cargo xtask dist first (the variant borrows its host)" >&2; exit 2; }
outside=$(git apply --numstat "$patch" | awk '$3 !~ /^gpu-kernels\// {print $3}')
git apply --check "$patch" || { echo "error: $patch does not apply to this tree" >&2; exit 2; }

out=dist/variant/$name
whole=$(mktemp -d) log=$(mktemp)
# The builds' output goes to a log, shown when one fails.
quietly() { "$@" > "$log" 2>&1 || { cat "$log" >&2; echo "error: $* failed" >&2; return 1; }; }
git apply "$patch"
trap 'git apply -R "$patch"; rm -rf "$whole" "$log" "$out"' EXIT
rm -rf "$out" && mkdir -p "$out"
if [[ -n $outside ]]; then
    host="the patched tree's ($(echo $outside | tr ' ' ','))"
    quietly cargo xtask dist --quiet --out "$whole"
    cp -r "$whole/ptx" "$whole/lab" "$whole/MANIFEST.txt" "$out/"
else
    host="dist/'s"
    quietly cargo xtask ptx
    cp -r dist/ptx dist/MANIFEST.txt "$out/"
    for c in llvm nvvm nvcc; do
        gzip -c "target/ptx/$c/gpu_kernels.ptx" > "$out/ptx/$c/gpu_kernels.ptx.gz"
    done
fi
changed=()
for c in llvm nvvm nvcc; do
    cmp -s <(zcat "dist/ptx/$c/gpu_kernels.ptx.gz") <(zcat "$out/ptx/$c/gpu_kernels.ptx.gz") || changed+=("$c")
done
if [[ ${#changed[@]} -eq 0 && -z $outside ]]; then
    echo "warning: $name's PTX is dist/'s in all three sets: the patch changed no kernel" >&2
fi
git apply -R "$patch"
trap 'rm -rf "$whole" "$log"' EXIT
# The tree's own PTX again, so nothing built here afterwards reads the variant's.
quietly cargo xtask ptx
echo "$out: $(du -sh "$out" | cut -f1): the lab $host, the PTX built with $patch (differing from dist/'s: ${changed[*]:-none})"
