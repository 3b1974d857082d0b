//! What the Rust source became, for the lab's kernels: each backend's PTX loaded and read
//! through the `sass` crate (parsed, assembled for sm_90 and disassembled, control bits, source
//! lines), then listed ([`listing`]), tabled ([`report`]) and diffed ([`diff`]), and checked
//! against what the chapter teaches ([`ptxcheck`] on the PTX, [`checks`] on the SASS).
//! [`backend`] says which of the lab's compilers wrote a PTX.
//!
//! Needs no GPU: only the PTX from `cargo xtask ptx` and the CUDA 13 tools that
//! `scripts/setup.sh` puts in `.tools/cuda13/bin`.

pub mod backend;
pub mod checks;
pub mod diff;
pub mod listing;
pub mod ptxcheck;
pub mod report;

use crate::util;
use anyhow::{Result, bail};
use catalog::{Backend, Format};
use sass::{Sass, ptx};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::SystemTime;

/// How `asm` shows what it read: the options of the listing, `--stats` and `--diff`.
#[derive(Clone, Copy, Debug)]
pub struct View {
    /// SASS for sm_90 instead of PTX.
    pub sass: bool,
    /// Source lines interleaved.
    pub source: bool,
    /// Registers live at each SASS instruction, the peak and the instruction mix.
    pub live: bool,
    /// Counts only.
    pub stats: bool,
    pub format: Format,
}

/// A `--backend` list: `llvm`, `nvvm`, `nvcc`, `both` (the Rust compilers), `all`, or several
/// comma-separated; the first mention wins (`all,llvm` is llvm, nvvm, nvcc).
pub fn parse_backends(s: &str) -> Result<Vec<Backend>, String> {
    let mut list = Vec::new();
    for part in s.split(',') {
        match part.trim() {
            "both" => list.extend(Backend::RUST),
            "all" => list.extend(Backend::ALL),
            other => match Backend::from_name(other) {
                Some(b) => list.push(b),
                None => {
                    return Err(format!(
                        "backend '{other}' is not one of llvm, nvvm, nvcc, both, all"
                    ));
                }
            },
        }
    }
    let mut unique = Vec::new();
    for b in list {
        if !unique.contains(&b) {
            unique.push(b);
        }
    }
    Ok(unique)
}

/// One backend's PTX, parsed, and (once needed) its SASS.
pub struct Build {
    pub backend: Backend,
    pub ptx_path: PathBuf,
    pub module: ptx::Module,
    /// Its file's name, where two files of one compiler are read side by side (two `--ptx`):
    /// the kernels' labels carry it.
    pub file: Option<String>,
    sass: Option<Arc<Sass>>,
}

/// A PTX file as it was when read: its path and modification time.
type PtxKey = (PathBuf, Option<SystemTime>);

/// One PTX file's SASS, assembled by the first thread that needs it while the others wait.
type Slot = Arc<Mutex<Option<Arc<Sass>>>>;

/// SASS assembled in this process, per PTX file as it was: a command that reads one backend's
/// SASS twice, and tests running side by side, share one ptxas and nvdisasm run (which also
/// keeps two threads from assembling into the same cubin file).
static ASSEMBLED: LazyLock<Mutex<HashMap<PtxKey, Slot>>> = LazyLock::new(Mutex::default);

impl Build {
    pub fn load(backend: Backend, path: &Path) -> Result<Build> {
        let module = ptxcheck::read(path, backend)?;
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
            file: None,
            sass: None,
        })
    }

    /// Assembles for sm_90 and disassembles, once ([`Sass::build`]: source lines with their
    /// inline chains, control bits, live registers).
    pub fn sass(&mut self) -> Result<&Sass> {
        if self.sass.is_none() {
            let modified = std::fs::metadata(&self.ptx_path).and_then(|m| m.modified());
            let key = (self.ptx_path.clone(), modified.ok());
            let slot = ASSEMBLED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key)
                .or_default()
                .clone();
            let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if slot.is_none() {
                // One cubin per process (processes run side by side) and PTX file.
                static FILES: AtomicUsize = AtomicUsize::new(0);
                let cubin = util::root().join("target/asm").join(format!(
                    "{}-{}-{}.cubin",
                    self.backend.name(),
                    std::process::id(),
                    FILES.fetch_add(1, Ordering::Relaxed)
                ));
                let tools = util::sass_tools()?;
                let sass = Sass::build(&tools, &self.ptx_path, &self.module, &cubin)?;
                *slot = Some(Arc::new(sass));
            }
            self.sass = slot.clone();
        }
        Ok(self.sass.as_deref().expect("assembled above"))
    }

    /// This build's entry points matching the `--kernel` patterns, in PTX order.
    pub fn kernels(&self, patterns: &[String]) -> Vec<String> {
        self.module
            .entries()
            .filter(|f| patterns.iter().any(|p| matches(p, &f.name)))
            .map(|f| f.name.clone())
            .collect()
    }
}

/// `all`, an exact entry name, a catalogued kernel's name (its entries: `reduce_v3` →
/// `reduce_v3_f32`, `reduce_v3_i32`, not another kernel whose name it begins), a prefix
/// ending at an underscore (`reduce` → every reduction), or a C++ kernel's name as its source
/// spells it (`matrix_chain_few_warps`, `ns::scale` for `_Z22matrix_chain_few_warpsPKfPfii`,
/// `_ZN2ns5scaleEPf`).
pub fn matches(pattern: &str, name: &str) -> bool {
    if pattern == "all" || name == pattern {
        return true;
    }
    if let Some(cxx) = cxx_name(name) {
        return cxx == pattern || cxx.rsplit("::").next() == Some(pattern);
    }
    if let Some(k) = catalog::kernels::find(pattern) {
        return k.entries().iter().any(|e| e == name);
    }
    name.strip_prefix(pattern)
        .is_some_and(|rest| rest.starts_with('_'))
}

/// The qualified name an Itanium-mangled C++ function name spells (`_Z3fooPf` → `foo`,
/// `_ZN2ns3fooEv` → `ns::foo`), its parameters left out; `None` for any other name.
fn cxx_name(mangled: &str) -> Option<String> {
    let rest = mangled.strip_prefix("_Z")?;
    let (nested, mut rest) = match rest.strip_prefix('N') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let mut parts = Vec::new();
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let len: usize = rest[..digits].parse().ok()?;
        let id = rest.get(digits..digits + len)?;
        parts.push(id);
        rest = &rest[digits + len..];
        // A nested name's identifiers run to its `E` (or a template's `I`).
        if !nested || !rest.starts_with(|c: char| c.is_ascii_digit()) {
            break;
        }
    }
    Some(parts.join("::"))
}

/// Version of the JSON documents `--format json` prints.
pub const SCHEMA_VERSION: u32 = 1;

/// The PTX to read: `files` (one, or two side by side: a kernel before and after a change),
/// or each of `backends`' `target/ptx/<backend>/` (default: the Rust compilers, or all three
/// with `check`). A backend named explicitly (or needed by `check`) must exist; the default
/// skips a missing one.
pub fn load_builds(
    files: &[PathBuf],
    backends: Option<&[Backend]>,
    check: bool,
) -> Result<Vec<Build>> {
    if files.len() > 2 {
        bail!("--ptx takes one file, or two side by side");
    }
    if !files.is_empty() {
        let mut builds = files
            .iter()
            .map(|path| {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| anyhow::anyhow!("cannot read '{}': {e}", path.display()))?;
                Build::load(backend::compiler(&text), path)
            })
            .collect::<Result<Vec<_>>>()?;
        if builds.len() > 1 {
            for b in &mut builds {
                b.file = b
                    .ptx_path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
            }
        }
        return Ok(builds);
    }
    let explicit = backends.is_some() || check;
    let wanted = match backends {
        Some(list) => list.to_vec(),
        None if check => Backend::ALL.to_vec(),
        None => Backend::RUST.to_vec(),
    };
    let root = util::root();
    let mut builds = Vec::new();
    for backend in wanted {
        let path = root.join(catalog::ptx::path(backend));
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
pub fn print_json(key: &str, value: &impl Serialize) -> Result<()> {
    let doc = serde_json::json!({ "schema_version": SCHEMA_VERSION, key: value });
    println!("{}", serde_json::to_string_pretty(&doc)?);
    Ok(())
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
        // A kernel's name is not a prefix of another kernel's entries.
        for k in catalog::KERNELS {
            for other in catalog::KERNELS.iter().filter(|o| o.name != k.name) {
                for e in other.entries() {
                    assert!(!matches(k.name, &e), "{} matches {e}", k.name);
                }
            }
        }
    }

    #[test]
    fn cxx_kernels_match_by_their_source_name() {
        assert_eq!(
            cxx_name("_Z22matrix_chain_few_warpsPKfPfii").as_deref(),
            Some("matrix_chain_few_warps")
        );
        assert_eq!(cxx_name("_ZN2ns5scaleEPf").as_deref(), Some("ns::scale"));
        assert_eq!(
            cxx_name("_ZN3lab4rows7softmaxEPKfPfj").as_deref(),
            Some("lab::rows::softmax")
        );
        assert_eq!(cxx_name("reduce_v3_f32"), None);
        assert_eq!(cxx_name("_Z"), None);
        assert_eq!(cxx_name("_Z99short"), None);
        assert!(matches(
            "matrix_chain_few_warps",
            "_Z22matrix_chain_few_warpsPKfPfii"
        ));
        assert!(matches("scale", "_ZN2ns5scaleEPf"));
        assert!(matches("ns::scale", "_ZN2ns5scaleEPf"));
        assert!(!matches(
            "matrix_chain",
            "_Z22matrix_chain_few_warpsPKfPfii"
        ));
        assert!(!matches("few_warps", "_Z22matrix_chain_few_warpsPKfPfii"));
    }

    #[test]
    fn backend_lists() {
        let p = parse_backends;
        assert_eq!(p("both"), Ok(vec![Backend::Llvm, Backend::Nvvm]));
        assert_eq!(p("nvvm,llvm"), Ok(vec![Backend::Nvvm, Backend::Llvm]));
        assert_eq!(p("all,llvm"), Ok(Backend::ALL.to_vec()));
        assert!(p("cuda").unwrap_err().contains("'cuda'"));
    }
}
