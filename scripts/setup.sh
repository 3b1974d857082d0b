#!/usr/bin/env bash
# Everything the build and the tests need, on a fresh Debian 12 machine (run as root).
# Idempotent: a second run checks each step and skips what is already there.
# Project-local: toolchains go through rustup, every other tool into .tools/ (git-ignored);
# the system Python is never touched.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/.tools
mkdir -p "$TOOLS"
step() { printf '==> %s\n' "$*"; }
SECONDS=0

# 1. Debian packages: libclang for the nvtx crate's bindgen; curl for rustup on a bare machine;
#    Chromium and a font for the test that opens `cargo xtask explore`'s pages headless;
#    a linter for the GPU machine's scripts (shellcheck), which only a device call runs.
APT_PKGS=(libclang-dev pkg-config unzip curl ca-certificates chromium fonts-dejavu-core shellcheck)
missing=()
for p in "${APT_PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
    step "apt: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    step "apt: ${APT_PKGS[*]} present"
fi

# 2. Rust: rustup (installed here when the machine has none, with no default toolchain), then
#    the pinned nightly for host, xtask, tests and the NVPTX-backend kernels.
#    (RUSTUP_AUTO_INSTALL=0 on these machines: install explicitly.)
[[ -x $HOME/.cargo/bin/rustup ]] && export PATH=$HOME/.cargo/bin:$PATH
if ! command -v rustup >/dev/null; then
    # rustup-init itself, from where sh.rustup.rs's script fetches it (that host may not
    # resolve where static.rust-lang.org, which serves the toolchains too, does).
    init_url=https://static.rust-lang.org/rustup/dist/$(uname -m)-unknown-linux-gnu/rustup-init
    step "rustup ($init_url, no default toolchain) into ~/.cargo"
    { curl --proto '=https' --tlsv1.2 -sSfL -o "$TOOLS/rustup-init" "$init_url" \
        && chmod +x "$TOOLS/rustup-init" \
        && "$TOOLS/rustup-init" -y --no-modify-path --default-toolchain none --profile minimal >/dev/null \
        && rm -f "$TOOLS/rustup-init"; } \
        || { echo "error: could not install rustup from $init_url: install it (https://rustup.rs) and run this again" >&2; exit 1; }
    export PATH=$HOME/.cargo/bin:$PATH
fi
NIGHTLY=$(sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml)
step "rust $NIGHTLY (+ rust-src, llvm-tools, llvm-bitcode-linker, rustfmt, clippy)"
rustup toolchain install "$NIGHTLY" --profile minimal --no-self-update \
    -c rust-src -c llvm-tools-preview -c llvm-bitcode-linker-preview -c rustfmt -c clippy >/dev/null

# 3. libcuda.so from Debian non-free (not installed, only unpacked): cust links against it,
#    and a binary linked with cust needs libcuda.so.1 just to start. Without a GPU the driver
#    then reports "no device", which the tests turn into a visible skip.
#    (cust's build script looks for $CUDA_LIBRARY_PATH/lib64.)
if [[ ! -e $TOOLS/libcuda/lib64/libcuda.so.1 ]]; then
    step "libcuda1 (Debian bookworm non-free, unpacked into .tools/libcuda/lib64)"
    tmp=$(mktemp -d)
    echo "deb http://deb.debian.org/debian bookworm non-free" >"$tmp/sources.list"
    apt_opts=(-o Dir::Etc::sourcelist="$tmp/sources.list" -o Dir::Etc::sourceparts=/dev/null
              -o Dir::State::Lists="$tmp/lists" -o Dir::Cache::archives="$tmp" -o APT::Sandbox::User=root)
    mkdir -p "$tmp/lists/partial"
    apt-get "${apt_opts[@]}" update -qq
    (cd "$tmp" && apt-get "${apt_opts[@]}" download libcuda1 >/dev/null)
    dpkg -x "$tmp"/libcuda1_*.deb "$tmp/x"
    rm -rf "$TOOLS/libcuda"
    mkdir -p "$TOOLS/libcuda/lib64"
    cp -a "$tmp"/x/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so* "$TOOLS/libcuda/lib64/"
    ln -sf libcuda.so.1 "$TOOLS/libcuda/lib64/libcuda.so"
    rm -rf "$tmp"
else
    step "libcuda1 present"
fi

# 4. CUDA 13.0 tools from NVIDIA's PyPI wheels (unzipped, not pip-installed): nvcc + cicc + crt
#    for CUB, ptxas/cuobjdump/nvdisasm for `xtask asm`, cuda.h and cudart, CCCL (CUB).
#    13.0 to match the GPU machine's driver (580) and nvcc (13.0.88).
CUDA_WHEELS=(nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-profiler-api==13.0.85
             nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85
             nvidia-cuda-cuobjdump==13.2.86 nvidia-cuda-nvdisasm==13.2.86)
stamp=$TOOLS/cuda/.wheels
if [[ ! -f $stamp || "$(cat "$stamp")" != "${CUDA_WHEELS[*]}" ]]; then
    step "CUDA 13 tool wheels into .tools/cuda"
    rm -rf "$TOOLS/cuda" "$TOOLS/wheels"
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$TOOLS/wheels" "${CUDA_WHEELS[@]}"
    mkdir -p "$TOOLS/cuda"
    for w in "$TOOLS"/wheels/*.whl; do unzip -qo "$w" 'nvidia/*' -d "$TOOLS/cuda"; done
    chmod +x "$TOOLS"/cuda/nvidia/cu13/bin/* "$TOOLS"/cuda/nvidia/cu13/nvvm/bin/* 2>/dev/null || true
    rm -rf "$TOOLS/wheels"
    echo "${CUDA_WHEELS[*]}" >"$stamp"
else
    step "CUDA 13 tool wheels present"
fi
ln -sfn cuda/nvidia/cu13 "$TOOLS/cuda13"

# 5. rust-cuda's compiler (rustc_codegen_nvvm): old nightly, LLVM, libnvvm 11.8, vendored crates.
if [[ -x scripts/setup-nvvm.sh ]]; then
    bash scripts/setup-nvvm.sh
fi

step "setup done in ${SECONDS}s; now: scripts/test.sh"
