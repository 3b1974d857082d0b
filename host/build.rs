//! CUB's reduction, the bench's reference, compiled with nvcc and linked in; and the commit the
//! binary is built from. The kernels' PTX is not built in: the host reads it from disk when a
//! context starts (`src/ptx.rs`), so one copy serves every binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    build_cub(root);
    git_commit(root);
}

fn fail(msg: &str) -> ! {
    // cargo shows build-script stderr on failure; `cargo::error` makes it the headline.
    println!("cargo::error={msg}");
    std::process::exit(1);
}

fn modified(p: &Path) -> SystemTime {
    std::fs::metadata(p).and_then(|m| m.modified()).unwrap()
}

/// CUB's `DeviceReduce::Sum` (`host/cub/cub_reduce.cu`), the bench's reference, compiled with
/// nvcc into a static library and linked with the static CUDA runtime. Without nvcc the build
/// goes on: `cfg(has_cub)` stays off and `LAB_CUB_MISSING` says why, for the CUB row.
/// nvcc (about 10 s) runs only when the .cu or the nvcc command changed, never for a PTX or
/// kernel change (the compiled library is kept in OUT_DIR between runs of this script).
fn build_cub(root: &Path) {
    println!("cargo::rustc-check-cfg=cfg(has_cub)");
    let cu = root.join("host/cub/cub_reduce.cu");
    println!("cargo:rerun-if-changed={}", cu.display());
    println!("cargo:rerun-if-env-changed=LAB_NO_CUB");
    println!("cargo:rerun-if-env-changed=CUDA_PATH");
    let missing = |why: String| println!("cargo:rustc-env=LAB_CUB_MISSING={why}");
    if std::env::var_os("LAB_NO_CUB").is_some() {
        return missing("this binary was built with LAB_NO_CUB set".into());
    }
    // CUDA_PATH comes from .cargo/config.toml (the CUDA 13 wheels under .tools/cuda13).
    let cuda = std::env::var_os("CUDA_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".tools/cuda13"));
    let nvcc = cuda.join("bin/nvcc");
    if !nvcc.exists() {
        return missing(format!(
            "nvcc was not found at {} when this binary was built: run scripts/setup.sh and rebuild",
            nvcc.display()
        ));
    }
    let Some(cudart_dir) = ["lib", "lib64"]
        .iter()
        .map(|d| cuda.join(d))
        .find(|d| d.join("libcudart_static.a").exists())
    else {
        return missing(format!(
            "libcudart_static.a was not found under {}/lib{{,64}} when this binary was built",
            cuda.display()
        ));
    };
    // The wheels keep CCCL (CUB) in include/cccl; a system toolkit has it in include/.
    let cccl = cuda.join("include/cccl");

    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let lib = out.join("libcub_reduce.a");
    let mut cmd = Command::new(&nvcc);
    cmd.args([
        "-lib",
        "-O3",
        "-std=c++17",
        "-arch=sm_90",
        "-Xcompiler",
        "-fPIC",
    ]);
    if cccl.is_dir() {
        cmd.arg("-I").arg(&cccl);
    }
    cmd.arg("-o").arg(&lib).arg(&cu);
    let line = format!("{cmd:?}");
    let stamp = out.join("cub_reduce.cmd");
    let fresh = lib.exists()
        && modified(&lib) > modified(&cu)
        && std::fs::read_to_string(&stamp).is_ok_and(|s| s == line);
    if !fresh {
        let _ = std::fs::remove_file(&stamp);
        match cmd.output() {
            Ok(o) if o.status.success() => std::fs::write(&stamp, &line).unwrap(),
            Ok(o) => fail(&format!(
                "nvcc failed to compile {} ({}): {}; set LAB_NO_CUB=1 to build without the CUB reference",
                cu.display(),
                o.status,
                String::from_utf8_lossy(&o.stderr).replace('\n', " | ")
            )),
            Err(e) => fail(&format!("could not run {}: {e}", nvcc.display())),
        }
    }
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=cub_reduce");
    println!("cargo:rustc-link-search=native={}", cudart_dir.display());
    println!("cargo:rustc-link-lib=static=cudart_static");
    for lib in ["stdc++", "dl", "rt", "pthread"] {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
    println!("cargo:rustc-cfg=has_cub");
}

/// The commit this binary is built from, for the bench's results files (`LAB_GIT_COMMIT`,
/// "unknown" outside a git checkout). Re-run when HEAD moves.
fn git_commit(root: &Path) {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=LAB_GIT_COMMIT={commit}");
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let dir = PathBuf::from(dir);
        let head_ref = git(&["symbolic-ref", "-q", "HEAD"]);
        // A path that does not exist would re-run this script on every build: watch only files
        // that are there (a branch's ref may live only in packed-refs).
        let watched = ["HEAD".to_string(), "packed-refs".into()]
            .into_iter()
            .chain(head_ref)
            .map(|p| dir.join(p))
            .filter(|p| p.exists());
        for p in watched {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
