#!/usr/bin/env bash
# rust-cuda's compiler for the second build of gpu-kernels (see nvvm/README.md):
# rustc_codegen_nvvm 0.3.0 on nightly-2021-12-04, libnvvm from CUDA 11.8, LLVM 7 (or LLVM 9 from
# Debian bullseye behind an llvm-config wrapper), and every crate vendored for the offline cargo 1.58.
#
# Fresh Debian 12, as root. Everything but the rustup toolchain goes into .tools/nvvm (git-ignored);
# nothing is installed into / except, when missing, Debian 12 build packages (libz3-dev & co.).
# Idempotent: each step checks what it would produce and skips when that is already there.
# LLVM_CONFIG=/path/to/llvm-7/bin/llvm-config uses that LLVM 7 unchanged instead of LLVM 9.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
NV=$ROOT/.tools/nvvm
OLD=nightly-2021-12-04
LIBNVVM_WHEEL=nvidia-cuda-nvcc-cu11==11.8.89
LLVM9_DEBS=(llvm-9 llvm-9-dev libllvm9 libffi7)
step() { printf '==> nvvm: %s\n' "$*"; }
die() { printf 'setup-nvvm: %s\n' "$*" >&2; exit 1; }
SECONDS=0
mkdir -p "$NV/bin"
rm -f "$NV/.ready"

# Modern cargo (the repository's pinned nightly, via rust-toolchain.toml) only vendors crates here.
modern_cargo() { (cd "$ROOT" && cargo "$@"); }

# 1. The old nightly that rustc_codegen_nvvm 0.3.0 is written against (rustup's own folders).
need=(rustc-dev rust-src llvm-tools-preview)
have=$(rustup component list --toolchain "$OLD" --installed 2>/dev/null || true)
missing=()
for c in "${need[@]}"; do grep -q "^$c" <<<"$have" || missing+=("$c"); done
if ((${#missing[@]})); then
    step "rust $OLD + ${need[*]} (rustup)"
    rustup toolchain install "$OLD" --profile minimal --no-self-update \
        -c rustc-dev -c rust-src -c llvm-tools-preview >/dev/null
else
    step "rust $OLD + ${need[*]} present"
fi
SYSROOT=$(rustup run "$OLD" rustc --print sysroot)
RUST_SRC=$SYSROOT/lib/rustlib/src/rust

# 2. LLVM for the codegen's C++ shim: a real LLVM 7 if LLVM_CONFIG names one, else LLVM 9.0.1
#    from Debian bullseye (apt-get download + dpkg -x, nothing installed) behind a wrapper that
#    reports 7.1.0, asks for static system libs and adds z3 (Debian's LLVM 9 links it).
llvm7=""
if [[ -n ${LLVM_CONFIG:-} ]] && [[ $("$LLVM_CONFIG" --version 2>/dev/null) == 7.* ]]; then
    llvm7=$(readlink -f "$LLVM_CONFIG")
fi
if [[ -n $llvm7 ]]; then
    step "llvm: LLVM 7 from LLVM_CONFIG=$llvm7 (used unchanged)"
    ln -sfn "$llvm7" "$NV/bin/llvm-config"
else
    real=$NV/llvm-9/usr/lib/llvm-9/bin/llvm-config
    llvm9_env() { LD_LIBRARY_PATH="$NV/llvm-9/usr/lib/llvm-9/lib:$NV/llvm-9/usr/lib/x86_64-linux-gnu" "$@"; }
    if [[ -x $real ]] && [[ $(llvm9_env "$real" --version 2>/dev/null) == 9.* ]]; then
        step "llvm: LLVM 9 (Debian bullseye) present in .tools/nvvm/llvm-9"
    else
        step "llvm: LLVM 9 from Debian bullseye (${LLVM9_DEBS[*]}) into .tools/nvvm/llvm-9"
        apt_dir=$NV/apt
        mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
        echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bullseye main' \
            >"$apt_dir/sources.list"
        apt_opts=(-q -o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
                  -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
                  -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root -o Debug::NoLocking=1)
        apt-get "${apt_opts[@]}" update >/dev/null
        rm -f "$apt_dir"/debs/*.deb
        (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "${LLVM9_DEBS[@]}" >/dev/null)
        rm -rf "$NV/llvm-9"
        for d in "$apt_dir"/debs/*.deb; do dpkg -x "$d" "$NV/llvm-9"; done
        [[ $(llvm9_env "$real" --version) == 9.* ]] || die "LLVM 9's llvm-config does not run"
        rm -rf "$apt_dir"
    fi
    # Debian 12 packages the shim build links against: z3 for LLVM 9, zlib and tinfo for LLVM.
    apt_need=(libz3-dev zlib1g-dev libncurses-dev g++)
    apt_missing=()
    for p in "${apt_need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || apt_missing+=("$p"); done
    if ((${#apt_missing[@]})); then
        step "apt: ${apt_missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null
    else
        step "apt: ${apt_need[*]} present"
    fi
    # The wrapper (rewritten on every run; a no-op when unchanged).
    rm -f "$NV/bin/llvm-config"
    cat >"$NV/bin/llvm-config" <<'EOF'
#!/bin/sh
# llvm-config for rustc_codegen_nvvm 0.3.0 (wants LLVM 7) over Debian bullseye's LLVM 9.0.1.
# Written by scripts/setup-nvvm.sh: the shim is ported to LLVM 9 (nvvm/patches/0001-*).
here=$(dirname "$(readlink -f "$0")")
llvm="$here/../llvm-9/usr/lib/llvm-9"
export LD_LIBRARY_PATH="$llvm/lib:$here/../llvm-9/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for arg in "$@"; do
    case "$arg" in
        # The build script checks that the version starts with 7.
        --version) echo "7.1.0"; exit 0 ;;
        # Static libs need static system libs (plain --system-libs prints none), plus z3.
        --system-libs) echo "$("$llvm/bin/llvm-config" --link-static "$@") -lz3"; exit 0 ;;
    esac
done
exec "$llvm/bin/llvm-config" "$@"
EOF
    chmod +x "$NV/bin/llvm-config"
fi

# 3. libnvvm 11.8 + libdevice from NVIDIA's PyPI wheel (pip download + unzip; no pip install).
#    The codegen's helpers want a CUDA root: CUDA_PATH/include/cuda.h must exist (a stub),
#    CUDA_PATH/nvvm/lib64/libnvvm.so (+ its SONAME libnvvm.so.4), CUDA_PATH/nvvm/libdevice.
CUDA11=$NV/cuda-11.8
if [[ -f $CUDA11/nvvm/lib64/libnvvm.so.4 && -f $CUDA11/nvvm/libdevice/libdevice.10.bc && -f $CUDA11/include/cuda.h ]]; then
    step "libnvvm 11.8 present in .tools/nvvm/cuda-11.8"
else
    step "libnvvm 11.8 from PyPI $LIBNVVM_WHEEL into .tools/nvvm/cuda-11.8"
    tmp=$(mktemp -d)
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "$LIBNVVM_WHEEL"
    unzip -qo "$tmp"/*.whl 'nvidia/cuda_nvcc/nvvm/*' -d "$tmp/x"
    rm -rf "$CUDA11"
    mkdir -p "$CUDA11/include"
    cp -r "$tmp/x/nvidia/cuda_nvcc/nvvm" "$CUDA11/nvvm"
    ln -sf libnvvm.so "$CUDA11/nvvm/lib64/libnvvm.so.4"
    echo '/* Stub: find_cuda_helper only checks that CUDA_PATH/include/cuda.h exists. */' >"$CUDA11/include/cuda.h"
    rm -rf "$tmp"
fi

# 4. The project's rustc_codegen_nvvm: crates.io 0.3.0, CRLF -> LF, then nvvm/patches/*.patch.
CG=$NV/rustc_codegen_nvvm
want=$(cat nvvm/patches/*.patch | sha256sum | cut -d' ' -f1)
if [[ -f $CG/.patched && $(cat "$CG/.patched") == "$want" ]]; then
    step "rustc_codegen_nvvm 0.3.0 + nvvm/patches present in .tools/nvvm/rustc_codegen_nvvm"
else
    step "rustc_codegen_nvvm 0.3.0 from crates.io + nvvm/patches/*.patch into .tools/nvvm/rustc_codegen_nvvm"
    fetch=$NV/fetch
    rm -rf "$fetch" "$CG"
    mkdir -p "$fetch/src"
    printf '[package]\nname = "fetch"\nversion = "0.0.0"\n[workspace]\n[dependencies]\nrustc_codegen_nvvm = "=0.3.0"\n' \
        >"$fetch/Cargo.toml"
    : >"$fetch/src/lib.rs"
    modern_cargo vendor -q --manifest-path "$fetch/Cargo.toml" "$fetch/vendor" >/dev/null
    cp -r "$fetch/vendor/rustc_codegen_nvvm" "$CG"
    rm -rf "$fetch" "$CG/.cargo-checksum.json"
    find "$CG" -type f \( -name '*.rs' -o -name '*.cpp' -o -name '*.h' -o -name '*.toml' -o -name '*.orig' \) \
        -exec sed -i 's/\r$//' {} +
    for p in nvvm/patches/*.patch; do
        patch -p1 -s --forward -d "$CG" <"$p" || die "patch $p does not apply"
    done
    echo "$want" >"$CG/.patched"
fi

# 5. The standard library's own dependencies, for -Z build-std (core, alloc) under cargo 1.58:
#    a workspace over the old toolchain's library/ with its Cargo.lock.
STD=$NV/std-ws
if [[ ! -f $STD/Cargo.lock || $(readlink "$STD/library") != "$RUST_SRC/library" ]]; then
    step "std workspace over $OLD's rust-src in .tools/nvvm/std-ws"
    rm -rf "$STD"
    mkdir -p "$STD"
    ln -s "$RUST_SRC/library" "$STD/library"
    cp "$RUST_SRC/Cargo.lock" "$STD/Cargo.lock"
    cat >"$STD/Cargo.toml" <<'EOF'
[workspace]
members = ["library/std", "library/core", "library/alloc", "library/test"]

[patch.crates-io]
rustc-std-workspace-core = { path = "library/rustc-std-workspace-core" }
rustc-std-workspace-alloc = { path = "library/rustc-std-workspace-alloc" }
rustc-std-workspace-std = { path = "library/rustc-std-workspace-std" }
EOF
    # Keep only this workspace's entries (the copied lock is the whole rust repository's).
    modern_cargo metadata -q --format-version 1 --manifest-path "$STD/Cargo.toml" >/dev/null
else
    step "std workspace present in .tools/nvvm/std-ws"
fi

# 6. Vendor every crate cargo 1.58 will need, from the committed lockfiles (version 3, pinned
#    to manifests cargo 1.58 can parse): the builder, the kernel crate, the std workspace.
grep -qx 'version = 3' gpu-kernels/Cargo.lock ||
    die "gpu-kernels/Cargo.lock must be lockfile version 3 (cargo 1.58 reads no other); see nvvm/README.md"
grep -qx 'version = 3' nvvm/Cargo.lock || die "nvvm/Cargo.lock must be lockfile version 3"
want=$(cat nvvm/Cargo.lock gpu-kernels/Cargo.lock "$STD/Cargo.lock" "$CG/Cargo.toml" | sha256sum | cut -d' ' -f1)
if [[ -f $NV/vendor/.stamp && $(cat "$NV/vendor/.stamp") == "$want" ]]; then
    step "vendored crates present in .tools/nvvm/vendor"
else
    step "vendoring crates (builder, gpu-kernels, std) into .tools/nvvm/vendor"
    modern_cargo vendor -q --locked --manifest-path nvvm/Cargo.toml \
        -s gpu-kernels/Cargo.toml -s "$STD/Cargo.toml" "$NV/vendor" >/dev/null
    echo "$want" >"$NV/vendor/.stamp"
fi

# 7. cargo 1.58's configuration, used through CARGO_HOME by xtask: offline, vendored crates only.
mkdir -p "$NV/cargo-home"
cat >"$NV/cargo-home/config.toml" <<EOF
# Written by scripts/setup-nvvm.sh: the nvvm build (cargo 1.58) runs offline on vendored crates.
[source.crates-io]
replace-with = "nvvm-vendored"

[source.nvvm-vendored]
directory = "$NV/vendor"

[net]
offline = true
EOF

date -u +%FT%TZ >"$NV/.ready"
step "set up in ${SECONDS}s; build with: cargo xtask ptx --backend nvvm"
