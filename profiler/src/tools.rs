//! Finding and running ncu and nsys, and turning their known failures into one clear line.

use anyhow::{Result, bail};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// A profiler binary: its name, the variable that overrides it, where NVIDIA installs it.
pub struct Tool {
    pub name: &'static str,
    pub what: &'static str,
    /// Environment variable holding an explicit path.
    pub env: &'static str,
    /// Known locations; a `*` stands for one directory level (a version), newest first.
    pub known: &'static [&'static str],
}

pub const NCU: Tool = Tool {
    name: "ncu",
    what: "Nsight Compute",
    env: "NCU",
    known: &[
        "/opt/nvidia/nsight-compute/*/ncu",
        "/usr/local/cuda/bin/ncu",
        "/usr/local/cuda/nsight-compute*/ncu",
    ],
};

pub const NSYS: Tool = Tool {
    name: "nsys",
    what: "Nsight Systems",
    env: "NSYS",
    known: &[
        "/opt/nvidia/nsight-systems/*/bin/nsys",
        "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
        "/usr/local/cuda/bin/nsys",
    ],
};

pub const SANITIZER: Tool = Tool {
    name: "compute-sanitizer",
    what: "CUDA Compute Sanitizer",
    env: "COMPUTE_SANITIZER",
    known: &[
        "/usr/local/cuda/bin/compute-sanitizer",
        "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
        "/opt/nvidia/compute-sanitizer/compute-sanitizer",
    ],
};

impl Tool {
    /// `$NCU`, else `ncu` on PATH, else the newest known location. None found: one line that
    /// says where it looked and what to do.
    pub fn find(&self) -> Result<PathBuf> {
        if let Some(p) = std::env::var_os(self.env).filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            if is_executable(&p) {
                return Ok(p);
            }
            bail!(
                "{}={} is not an executable file: point it at the {} binary or unset it",
                self.env,
                p.display(),
                self.name
            );
        }
        self.find_in(std::env::var_os("PATH").as_deref(), self.known)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} ({}) not found on PATH nor in {}: install it, add it to PATH, or set {}=/path/to/{}",
                    self.name,
                    self.what,
                    self.known.join(", "),
                    self.env,
                    self.name
                )
            })
    }

    /// The search itself, for a given PATH and list of known patterns.
    pub fn find_in(&self, path: Option<&OsStr>, known: &[&str]) -> Option<PathBuf> {
        if let Some(path) = path {
            for dir in std::env::split_paths(path) {
                let p = dir.join(self.name);
                if is_executable(&p) {
                    return Some(p);
                }
            }
        }
        known.iter().find_map(|pattern| expand(pattern))
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable matching `pattern` (`*` = one path component, highest version first).
pub fn expand(pattern: &str) -> Option<PathBuf> {
    let mut candidates = vec![PathBuf::from("/")];
    for part in Path::new(pattern).components().skip(1) {
        let part = part.as_os_str().to_string_lossy();
        let mut next = Vec::new();
        for dir in &candidates {
            if part.contains('*') {
                let (pre, post) = part.split_once('*').expect("contains *");
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                let mut names: Vec<String> = entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| {
                        n.starts_with(pre) && n.ends_with(post) && n.len() >= pre.len() + post.len()
                    })
                    .collect();
                names.sort_by_key(|n| std::cmp::Reverse(version_key(n)));
                next.extend(names.into_iter().map(|n| dir.join(n)));
            } else {
                next.push(dir.join(&*part));
            }
        }
        candidates = next;
    }
    candidates.into_iter().find(|p| is_executable(p))
}

/// `2025.3.1` sorts after `2025.10.0`? No: numbers compare as numbers.
fn version_key(s: &str) -> Vec<u64> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

/// A failure of ncu or nsys that has a known cause and remedy.
pub fn known_problem(tool: &str, output: &str) -> Option<String> {
    if output.contains("ERR_NVGPUCTRPERM") {
        return Some(
            "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): run it as root, \
             or in a container started with --cap-add SYS_ADMIN, or have the host load the nvidia \
             module with NVreg_RestrictProfilingToAdminUsers=0"
                .into(),
        );
    }
    if let Some(lib) = missing_library(output) {
        let who = if output.contains("QdstrmImporter") {
            format!("{tool}'s importer")
        } else {
            tool.to_string()
        };
        return Some(format!("{who} cannot load {lib}: {}", library_remedy(lib)));
    }
    None
}

/// nsys's importer (`QdstrmImporter`), which turns the raw capture (`.qdstrm`) into the
/// report, in a folder beside nsys's own: `linux-desktop-glibc_*-x64/` in the nsys that
/// ships inside Nsight Compute (`host/target-linux-x64/nsys`), `host-linux-x64/` in Nsight
/// Systems (`target-linux-x64/nsys`, or the `bin/nsys` wrapper one level up).
pub fn nsys_importer(nsys: &Path) -> Option<PathBuf> {
    let nsys = std::fs::canonicalize(nsys).ok()?;
    let dir = nsys.parent()?;
    let bases = [dir.parent(), dir.parent().and_then(Path::parent)];
    bases.into_iter().flatten().find_map(|base| {
        [
            "linux-desktop-glibc_*-x64/QdstrmImporter",
            "host-linux-x64/QdstrmImporter",
        ]
        .iter()
        .find_map(|p| expand(&base.join(p).to_string_lossy()))
    })
}

/// The library the dynamic loader could not find, from its message (`QdstrmImporter: error
/// while loading shared libraries: libdw.so.1: cannot open shared object file: …`).
pub fn missing_library(output: &str) -> Option<&str> {
    let (_, rest) = output.split_once("error while loading shared libraries: ")?;
    let (lib, _) = rest.split_once(": cannot open shared object file")?;
    Some(lib.trim()).filter(|l| !l.is_empty() && !l.contains(char::is_whitespace))
}

/// What to do about a missing shared library, in one clause: the Debian package that has it
/// (and, without root, how to use that package's files in place).
pub fn library_remedy(lib: &str) -> String {
    // libdw1 needs libelf1 beside it.
    let (package, download) = match lib {
        "libdw.so.1" => ("libdw1", "libdw1 libelf1"),
        "libelf.so.1" => ("libelf1", "libelf1"),
        _ => {
            return format!(
                "install the package that provides {lib} (Debian: `apt-file search {lib}`), or \
                 put the folder that holds it on LD_LIBRARY_PATH"
            );
        }
    };
    format!(
        "apt-get install {package} (or, without root, `apt-get download {download}`, `dpkg -x` \
         them and put their usr/lib/x86_64-linux-gnu on LD_LIBRARY_PATH)"
    )
}

/// Why nsys wrote no report, from its importer's own `--version` (nsys itself says only
/// "Importer error status: An unknown error occurred"). None when the importer is not found
/// or runs.
pub fn importer_problem(nsys: &Path) -> Option<String> {
    let importer = nsys_importer(nsys)?;
    let out = std::process::Command::new(&importer)
        .arg("--version")
        .output()
        .ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    importer_diagnosis(&importer, &text, out.status.success())
}

/// [`importer_problem`] from what `QdstrmImporter --version` printed and whether it succeeded.
pub fn importer_diagnosis(importer: &Path, output: &str, success: bool) -> Option<String> {
    if success {
        return None;
    }
    if let Some(lib) = missing_library(output) {
        return Some(format!(
            "nsys's importer ({}) cannot load {lib}: {}",
            importer.display(),
            library_remedy(lib)
        ));
    }
    let said = output
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("nothing");
    Some(format!(
        "nsys's importer fails on its own: `{} --version` said \"{said}\"",
        importer.display()
    ))
}

/// ncu profiled nothing.
pub fn profiled_nothing(output: &str) -> bool {
    output.contains("No kernels were profiled")
}
