//! Embeds the kernels' PTX (written by `cargo xtask ptx`) into the host library, so the `lab`
//! binary needs only a CUDA driver where it runs. A missing or stale PTX is a build error that
//! names the command that fixes it.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

const BACKENDS: [&str; 2] = ["llvm", "nvvm"];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let sources = kernel_sources(&root.join("gpu-kernels"));
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    let newest_source = sources.iter().map(|p| modified(p)).max().unwrap();

    let mut code = String::new();
    for backend in BACKENDS {
        let ptx = root
            .join("target/ptx")
            .join(backend)
            .join("gpu_kernels.ptx");
        println!("cargo:rerun-if-changed={}", ptx.display());
        if !ptx.exists() {
            if backend == "nvvm" && std::env::var_os("LAB_ALLOW_MISSING_NVVM").is_some() {
                println!("cargo:rerun-if-env-changed=LAB_ALLOW_MISSING_NVVM");
                code += "pub const NVVM: Option<&str> = None;\n";
                continue;
            }
            fail(&format!(
                "{backend} PTX is missing ({}): run `cargo xtask ptx` first",
                ptx.display()
            ));
        }
        if modified(&ptx) < newest_source {
            fail(&format!(
                "{backend} PTX is older than the kernel sources in gpu-kernels/: run `cargo xtask ptx`"
            ));
        }
        code += &format!(
            "pub const {}: Option<&str> = Some(include_str!({:?}));\n",
            backend.to_uppercase(),
            ptx.display().to_string()
        );
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("ptx.rs");
    std::fs::write(out, code).unwrap();
}

fn fail(msg: &str) -> ! {
    // cargo shows build-script stderr on failure; `cargo::error` makes it the headline.
    println!("cargo::error={msg}");
    std::process::exit(1);
}

fn modified(p: &Path) -> SystemTime {
    std::fs::metadata(p).and_then(|m| m.modified()).unwrap()
}

/// gpu-kernels/Cargo.toml and every .rs under gpu-kernels/src.
fn kernel_sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.join("Cargo.toml")];
    let mut stack = vec![dir.join("src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out
}
