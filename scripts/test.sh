#!/usr/bin/env bash
# The test command: build the PTX sets (llvm, nvvm, nvcc and the canaries'), check formatting and
# clippy, then run every test of the workspace. On a machine without a GPU the GPU tests print
# "skipped: no CUDA device" and pass; on a GPU machine they run (see README: `dist/` for
# machines without cargo).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d .tools/cuda13 ]] || { echo "error: tools missing: run scripts/setup.sh first" >&2; exit 1; }
# rustup's proxies, when setup.sh installed rustup in this shell's absence.
[[ -x $HOME/.cargo/bin/cargo ]] && export PATH=$HOME/.cargo/bin:$PATH

# A binary linked with cust needs libcuda.so.1 just to start. Without a driver on this
# machine, use the unpacked Debian library: the driver API then reports "no device".
if ! ldconfig -p | grep -q 'libcuda\.so\.1 '; then
    export LD_LIBRARY_PATH="$PWD/.tools/libcuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

step() { printf '==> %s\n' "$*"; }
step "cargo xtask ptx"
cargo xtask ptx
step "cargo fmt --check"
cargo fmt --all --check
(cd gpu-kernels && cargo fmt --check)
step "cargo clippy"
cargo clippy --workspace --release --all-targets --quiet -- -D warnings
# The kernels for rustc's NVPTX backend: the lab's, then the sanitizer's canaries.
kernel_clippy() {
    (cd gpu-kernels && RUSTFLAGS="-C target-cpu=sm_90" CARGO_TARGET_DIR=../target/kernels-clippy \
        cargo clippy --quiet --release --target nvptx64-nvidia-cuda -Z build-std=core "$@" -- -D warnings)
}
kernel_clippy
kernel_clippy --features canaries
step "cargo test"
cargo test --workspace --release -- --show-output
