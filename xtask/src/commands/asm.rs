//! `cargo xtask asm`: what the Rust source became. Prints a kernel's PTX (default) or its
//! SASS for sm_90 (`--sass`: `ptxas -arch=sm_90 -lineinfo`, then `nvdisasm`), optionally with
//! the Rust lines interleaved (`--source`); counts instructions by class per kernel and
//! backend (`--stats`); compares two kernels, or one kernel across the two compilers
//! (`--diff`); and runs the checks that keep the chapter's claims true (`--check`).
//!
//! Needs no GPU: only the PTX from `cargo xtask ptx` and the CUDA 13 tools that
//! `scripts/setup.sh` puts in `.tools/cuda13/bin`.

pub mod checks;
pub mod counts;
mod listing;
pub mod ptx;
mod report;
pub mod sass;

use crate::util;
pub use crate::util::Format;
use anyhow::{Result, bail};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Kernel(s), comma-separated: an entry point (reduce_v1_f32), a prefix naming several
    /// (reduce_v1 = reduce_v1_f32 and reduce_v1_i32; reduce = every reduction), or all
    #[arg(long, short, value_delimiter = ',', default_value = "all")]
    kernel: Vec<String>,
    /// Which compiler's PTX: llvm (rustc's NVPTX backend), nvvm (rust-cuda), nvcc (the CUDA C++
    /// twins), both (llvm,nvvm), all, or a list such as llvm,nvcc [default: both, skipping one
    /// that is not built; with --check: all]
    #[arg(long, value_parser = parse_backends)]
    backend: Option<BackendList>,
    /// Print SASS for sm_90 instead of PTX (also what --diff compares)
    #[arg(long)]
    sass: bool,
    /// Interleave the Rust source lines the PTX's line info points to
    #[arg(long)]
    source: bool,
    /// Instruction counts by class, registers, stack, spills and unrolling, one row per
    /// kernel and backend (with --diff: only the counts)
    #[arg(long, conflicts_with = "check")]
    stats: bool,
    /// Compare two kernels (A B), or one kernel across two backends (A --backend llvm,nvvm):
    /// the counts that differ, then a unified diff of the PTX (or SASS with --sass)
    #[arg(long, num_args = 1..=2, value_names = ["A", "B"], conflicts_with = "check")]
    diff: Option<Vec<String>>,
    /// Run the PTX and SASS checks (CI); exits 1 if any fails
    #[arg(long)]
    check: bool,
    /// Output format (csv: --stats only)
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Read this PTX file instead of target/ptx/<backend>/gpu_kernels.ptx (its backend is
    /// read from its header)
    #[arg(long, value_name = "FILE", conflicts_with = "backend")]
    ptx: Option<PathBuf>,
}

/// The two Rust GPU compilers, and nvcc on the CUDA C++ twins of the chapter's kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// rustc's built-in NVPTX backend (LLVM), `.target sm_90`.
    Llvm,
    /// rust-cuda's `rustc_codegen_nvvm` through libnvvm 11.8, `.target sm_80`.
    Nvvm,
    /// nvcc 13 on `gpu-kernels/cuda/kernels.cu`, `.target sm_90`.
    Nvcc,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Llvm, Backend::Nvvm, Backend::Nvcc];
    pub const RUST: [Backend; 2] = [Backend::Llvm, Backend::Nvvm];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Llvm => "llvm",
            Backend::Nvvm => "nvvm",
            Backend::Nvcc => "nvcc",
        }
    }
    pub fn ptx_target(self) -> &'static str {
        match self {
            Backend::Llvm | Backend::Nvcc => "sm_90",
            Backend::Nvvm => "sm_80",
        }
    }

    /// Which compiler wrote `ptx`. nvcc and rust-cuda's libnvvm both sign as the "NVIDIA NVVM
    /// Compiler" with a "Cuda compilation tools, release X.Y" line; nvcc's file names a `.cu`
    /// source (`-lineinfo`), and the libnvvm rust-cuda uses here is 11.8, so a CUDA 12 or
    /// later release without a `.cu` file is nvcc too.
    pub fn of_ptx(ptx: &str) -> Backend {
        let header: Vec<&str> = ptx.lines().take(10).collect();
        if !header.iter().any(|l| l.contains("NVVM Compiler")) {
            return Backend::Llvm;
        }
        let cu_source = ptx
            .lines()
            .any(|l| l.trim_start().starts_with(".file") && l.trim_end().ends_with(".cu\""));
        let release = header
            .iter()
            .find_map(|l| l.split("release ").nth(1))
            .and_then(|r| r.split('.').next()?.parse::<u32>().ok());
        if cu_source || release.is_some_and(|major| major >= 12) {
            Backend::Nvcc
        } else {
            Backend::Nvvm
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone)]
pub struct BackendList(Vec<Backend>);

fn parse_backends(s: &str) -> Result<BackendList, String> {
    let mut list = Vec::new();
    for part in s.split(',') {
        match part.trim() {
            "llvm" => list.push(Backend::Llvm),
            "nvvm" => list.push(Backend::Nvvm),
            "nvcc" => list.push(Backend::Nvcc),
            "both" => list.extend(Backend::RUST),
            "all" => list.extend(Backend::ALL),
            other => {
                return Err(format!(
                    "backend '{other}' is not one of llvm, nvvm, nvcc, both, all"
                ));
            }
        }
    }
    // First mention wins: `all,llvm` is llvm, nvvm, nvcc.
    let mut unique = Vec::new();
    for b in list {
        if !unique.contains(&b) {
            unique.push(b);
        }
    }
    Ok(BackendList(unique))
}

/// One backend's PTX, parsed, and (once needed) its SASS.
pub struct Build {
    pub backend: Backend,
    pub ptx_path: PathBuf,
    pub module: ptx::Module,
    sass: Option<Sass>,
}

pub struct Sass {
    pub functions: Vec<sass::Function>,
    pub resources: BTreeMap<String, sass::Resources>,
}

impl Build {
    fn load(backend: Backend, path: &Path) -> Result<Build> {
        let module = crate::ptxcheck::read(path, backend)?;
        if module.target.iter().any(|t| t == "debug") {
            eprintln!(
                "warning: {} has '.target {}': ptxas compiles debug targets without optimization",
                path.display(),
                module.target.join(", ")
            );
        }
        Ok(Build {
            backend,
            ptx_path: path.to_path_buf(),
            module,
            sass: None,
        })
    }

    /// Assembles for sm_90 and disassembles, once; the listing carries nvdisasm's source
    /// lines where the PTX had line info.
    pub fn sass(&mut self) -> Result<&Sass> {
        if self.sass.is_none() {
            // One cubin per process: tests run several of these at once.
            let cubin = util::root().join("target/asm").join(format!(
                "{}-{}.cubin",
                self.backend.name(),
                std::process::id()
            ));
            let (cubin, resources) = sass::assemble(&self.ptx_path, &cubin)?;
            let functions = sass::disassemble(&cubin);
            let _ = std::fs::remove_file(&cubin);
            self.sass = Some(Sass {
                functions: functions?,
                resources,
            });
        }
        Ok(self.sass.as_ref().expect("assembled above"))
    }

    /// This build's entry points matching the `--kernel` patterns, in PTX order.
    fn kernels(&self, patterns: &[String]) -> Vec<String> {
        self.module
            .entries()
            .filter(|f| patterns.iter().any(|p| matches(p, &f.name)))
            .map(|f| f.name.clone())
            .collect()
    }
}

impl Sass {
    pub fn function(&self, name: &str) -> Option<&sass::Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}

/// `all`, an exact name, or a prefix ending at an underscore (`reduce_v1` → `reduce_v1_f32`).
fn matches(pattern: &str, name: &str) -> bool {
    pattern == "all"
        || name == pattern
        || name
            .strip_prefix(pattern)
            .is_some_and(|rest| rest.starts_with('_'))
}

/// Version of the JSON documents `--format json` prints.
pub const SCHEMA_VERSION: u32 = 1;

pub fn run(args: &Args) -> Result<()> {
    if args.format == Format::Csv && !(args.stats && args.diff.is_none()) {
        bail!("--format csv applies to --stats (one row per kernel and backend)");
    }
    let mut builds = load_builds(args)?;
    if args.check {
        return checks::run(&mut builds, args.format);
    }
    if let Some(sides) = &args.diff {
        return report::diff(&mut builds, sides, args);
    }
    for p in &args.kernel {
        if !builds
            .iter()
            .any(|b| !b.kernels(std::slice::from_ref(p)).is_empty())
        {
            let names: Vec<String> = builds[0].kernels(&["all".into()]);
            bail!("no kernel matches '{p}' (kernels: {})", names.join(", "));
        }
    }
    if args.stats {
        return report::stats(&mut builds, &args.kernel, args.format);
    }
    listing::print(&mut builds, &args.kernel, args)
}

/// The PTX to read: `--ptx FILE`, or each selected backend's `target/ptx/<backend>/`. A backend
/// named explicitly (or needed by `--check`) must exist; the default skips a missing one.
fn load_builds(args: &Args) -> Result<Vec<Build>> {
    if let Some(path) = &args.ptx {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read '{}': {e}", path.display()))?;
        return Ok(vec![Build::load(Backend::of_ptx(&text), path)?]);
    }
    let explicit = args.backend.is_some() || args.check;
    let wanted = match &args.backend {
        Some(BackendList(list)) => list.clone(),
        None if args.check => Backend::ALL.to_vec(),
        None => Backend::RUST.to_vec(),
    };
    let root = util::root();
    let mut builds = Vec::new();
    for backend in wanted {
        let path = crate::commands::ptx::ptx_path(&root, backend.name());
        if !path.exists() && !explicit {
            eprintln!(
                "note: no {backend} PTX at {} (run cargo xtask ptx --backend {backend}); showing the others",
                path.display()
            );
            continue;
        }
        builds.push(Build::load(backend, &path)?);
    }
    if builds.is_empty() {
        bail!("no PTX under target/ptx/: run cargo xtask ptx");
    }
    Ok(builds)
}

/// Prints one JSON document on stdout: `{"schema_version": 1, "<key>": value}`.
fn print_json(key: &str, value: &impl Serialize) -> Result<()> {
    let doc = serde_json::json!({ "schema_version": SCHEMA_VERSION, key: value });
    println!("{}", serde_json::to_string_pretty(&doc)?);
    Ok(())
}

/// `/work/main/gpu-kernels/src/reduce.rs` → `gpu-kernels/src/reduce.rs`; a path inside the
/// Rust sources → from `core/` on.
pub fn short_path(path: &str) -> String {
    let root = util::root();
    if let Ok(rel) = Path::new(path).strip_prefix(&root) {
        return rel.display().to_string();
    }
    match path.find("/library/") {
        Some(i) => path[i + "/library/".len()..].replace("core/src/../../stdarch/crates/", ""),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_patterns() {
        assert!(matches("reduce_v1", "reduce_v1_f32"));
        assert!(matches("reduce", "reduce_v6_i32"));
        assert!(matches("all", "bump"));
        assert!(matches("bump", "bump"));
        assert!(!matches("reduce_v1", "reduce_v10_f32"));
        assert!(!matches("reduce_v", "reduce_v1_f32"));
    }

    #[test]
    fn ptx_headers_name_their_compiler() {
        let nvvm = "//\n// Generated by NVIDIA NVVM Compiler\n//\n// Compiler Build ID: CL-31833905\n\
                    // Cuda compilation tools, release 11.8, V11.8.89\n// Based on NVVM 7.0.1\n//\n\n\
                    .version 7.8\n.target sm_80\n";
        let nvcc = "//\n// Generated by NVIDIA NVVM Compiler\n//\n// Compiler Build ID: CL-36424714\n\
                    // Cuda compilation tools, release 13.0, V13.0.88\n// Based on NVVM 7.0.1\n//\n\n\
                    .version 9.0\n.target sm_90\n";
        let llvm = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.8\n.target sm_90\n";
        assert_eq!(Backend::of_ptx(nvvm), Backend::Nvvm);
        assert_eq!(Backend::of_ptx(nvcc), Backend::Nvcc);
        assert_eq!(Backend::of_ptx(llvm), Backend::Llvm);
        let lineinfo = format!("{nvvm}\t.file\t1 \"/src/kernels.cu\"\n");
        assert_eq!(Backend::of_ptx(&lineinfo), Backend::Nvcc);
        // The real files, where built.
        let root = crate::util::root();
        for b in Backend::ALL {
            let path = crate::commands::ptx::ptx_path(&root, b.name());
            if let Ok(text) = std::fs::read_to_string(&path) {
                assert_eq!(Backend::of_ptx(&text), b, "{}", path.display());
            }
        }
    }

    #[test]
    fn backend_lists() {
        let p = |s| parse_backends(s).map(|l| l.0);
        assert_eq!(p("both"), Ok(vec![Backend::Llvm, Backend::Nvvm]));
        assert_eq!(p("nvvm,llvm"), Ok(vec![Backend::Nvvm, Backend::Llvm]));
        assert_eq!(p("all,llvm"), Ok(Backend::ALL.to_vec()));
        assert!(p("cuda").unwrap_err().contains("'cuda'"));
    }
}
