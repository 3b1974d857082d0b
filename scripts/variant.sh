#!/usr/bin/env bash
# A kernel variant to time beside dist/ in the same device call, built here from the repo root
# after `cargo xtask dist`: dist/variant/NAME holds copies of dist/'s lab and MANIFEST.txt and
# of dist/ptx, whose llvm, nvvm and nvcc PTX are rebuilt from the tree with PATCH applied; the
# patch is taken back out afterwards, on failure too. The lab loads the PTX beside it, so
# `dist/variant/NAME/lab bench ...` runs the variant's kernels under dist/'s host (the canary's
# PTX stays dist/'s). A patch that changes more than gpu-kernels/ changes the host too: build
# that variant whole with `cargo xtask dist --out dist/variant/NAME`.
# Usage: bash scripts/variant.sh NAME PATCH     (e.g. then carry dist, which holds it)
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
if [[ -n $outside ]]; then
    echo "error: $patch changes more than gpu-kernels/ ($(echo $outside | tr ' ' ',')): build it whole with cargo xtask dist --out dist/variant/$name" >&2
    exit 2
fi
git apply --check "$patch" || { echo "error: $patch does not apply to this tree" >&2; exit 2; }

git apply "$patch"
trap 'git apply -R "$patch"' EXIT
cargo xtask ptx > /dev/null
out=dist/variant/$name
rm -rf "$out" && mkdir -p "$out"
cp -r dist/ptx dist/lab dist/MANIFEST.txt "$out/"
changed=()
for c in llvm nvvm nvcc; do
    gzip -c "target/ptx/$c/gpu_kernels.ptx" > "$out/ptx/$c/gpu_kernels.ptx.gz"
    cmp -s <(zcat "dist/ptx/$c/gpu_kernels.ptx.gz") "target/ptx/$c/gpu_kernels.ptx" || changed+=("$c")
done
if [[ ${#changed[@]} -eq 0 ]]; then
    echo "warning: $name's PTX is dist/'s in all three sets: the patch changed no kernel" >&2
fi
git apply -R "$patch"
trap - EXIT
# The tree's own PTX again, so nothing built here afterwards reads the variant's.
cargo xtask ptx > /dev/null
echo "$out: $(du -sh "$out" | cut -f1): dist/'s lab and MANIFEST.txt, the PTX built with $patch (differing from dist/'s: ${changed[*]:-none})"
