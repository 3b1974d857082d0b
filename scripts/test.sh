#!/usr/bin/env bash
# The test command: formatting; clippy (-D warnings) on the workspace and on the kernels (both
# feature sets); the PTX sets (llvm, nvvm, nvcc and the canaries'); every test of the workspace.
# On a machine without a GPU the GPU tests print "skipped: no CUDA device" and pass; on a GPU
# machine they run (see README: `dist/` for machines without cargo).
#
# Everything is built once, in the `ci` profile (Cargo.toml), and what does not depend on each
# other runs side by side: the kernels' clippy and the PTX sets beside the workspace's build.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d .tools/cuda13 ]] || { echo "error: tools missing: run scripts/setup.sh first" >&2; exit 1; }
# rustup's proxies, when setup.sh installed rustup in this shell's absence.
[[ -x ${HOME:-}/.cargo/bin/cargo ]] && export PATH=$HOME/.cargo/bin:$PATH

# A binary linked with cust needs libcuda.so.1 just to start. Without a driver on this
# machine, use the unpacked Debian library: the driver API then reports "no device".
# (ldconfig lives in /sbin, which a minimal PATH leaves out.)
if ! "$(command -v ldconfig || echo /sbin/ldconfig)" -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    export LD_LIBRARY_PATH="$PWD/.tools/libcuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export CARGO_INCREMENTAL=0
profile=(--profile ci)
# The workspace's clippy inside its one build: clippy-driver compiles as rustc does and lints
# on the way (what `cargo clippy --all-targets -- -D warnings` runs, on the same targets: the
# libraries, their tests, the binaries, the integration tests), so the build the tests run is
# the one clippy checked. Never the kernels': clippy-driver turns MIR optimizations off, which
# changes the PTX; they get `cargo clippy` of their own.
driver=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
lint() { RUSTC_WORKSPACE_WRAPPER=$driver CLIPPY_ARGS=-Dwarnings cargo "$@"; }
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$target"

step() { printf '==> %s (%d s)\n' "$*" "$SECONDS"; }
# A job in the background, its output kept in a log and shown when it is waited for.
start() { # name, command...
    local name=$1; shift
    "$@" >"$target/$name.log" 2>&1 &
    jobs_pid[$name]=$!
}
declare -A jobs_pid
finish() { # name
    local rc=0
    wait "${jobs_pid[$1]}" || rc=$?
    step "$1 (finished)"
    cat "$target/$1.log"
    [[ $rc -eq 0 ]] || { echo "error: $1 failed (exit $rc)" >&2; exit 1; }
}
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

step "cargo fmt --check"
cargo fmt --all --check
(cd gpu-kernels && cargo fmt --check)

# The kernels for rustc's NVPTX backend: the lab's, then the sanitizer's canaries.
kernel_clippy() {
    (cd gpu-kernels && RUSTFLAGS="-C target-cpu=sm_90 -C target-feature=+ptx81" CARGO_TARGET_DIR=../target/kernels-clippy \
        cargo clippy --quiet --release --target nvptx64-nvidia-cuda -Z build-std=core -- -D warnings &&
        RUSTFLAGS="-C target-cpu=sm_90 -C target-feature=+ptx81" CARGO_TARGET_DIR=../target/kernels-clippy \
        cargo clippy --quiet --release --target nvptx64-nvidia-cuda -Z build-std=core \
            --features canaries -- -D warnings)
}
step "kernels' clippy, beside the xtask build"
start kernel-clippy kernel_clippy
lint build "${profile[@]}" --quiet -p xtask
# The nvvm set (whose compiler, rust-cuda's codegen, is built first) beside the others: the
# longest job, started as soon as xtask is there.
step "xtask ptx: nvvm, and llvm then nvcc, beside the workspace's clippy and test build"
start ptx-nvvm "$target/ci/xtask" ptx --backend nvvm
start ptx-llvm-nvcc sh -c "'$target/ci/xtask' ptx --backend llvm && '$target/ci/xtask' ptx --backend nvcc"
lint test --workspace "${profile[@]}" --no-run --quiet
finish kernel-clippy
finish ptx-llvm-nvcc
finish ptx-nvvm

# The Python beside the lab: the peers' table and JSON (without torch: its tests that need it
# skip), and every script's syntax.
step "python3: gpu/rows unit tests, every gpu/ script compiles"
python3 -m unittest discover -s gpu/rows -p 'test_*.py' -q
python3 -m py_compile gpu/*.py gpu/rows/*.py gpu/corpus/*.py
# The GPU machine's scripts run only in a device call: their mistakes are found here.
step "shellcheck: gpu/, scripts/, .ci/run, the record's scripts"
shellcheck -x -S warning gpu/*.sh gpu/rows/*.sh scripts/*.sh .ci/run results/rows/e8d2463/*.sh
step "cargo test"
lint test --workspace "${profile[@]}" -- --show-output
step "done"
