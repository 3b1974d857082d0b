//! The kernels' PTX, read when a [`crate::Lab`] (or a canary) starts, from one place on disk
//! instead of inside every binary:
//!
//! - in `dist/` (a `MANIFEST.txt` beside `ptx/`, as `cargo xtask dist` lays it out):
//!   `ptx/<set>/gpu_kernels.ptx.gz` beside the running binary or one folder up (`dist/lab`,
//!   `dist/tests/gpu`), built together with them, gzipped;
//! - else in the tree the binary was built from: `target/ptx/<set>/gpu_kernels.ptx`, what
//!   `cargo xtask ptx` writes, which must be newer than the kernel sources it was built from.
//!
//! A PTX missing, or older than its sources, is one line naming the file and the command that
//! makes it.

use crate::error::{HostError, Result};
use catalog::Backend;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The tree this binary was built from (its workspace root).
fn built_in() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_path_buf()
}

/// `backend`'s PTX.
pub fn of(backend: Backend) -> Result<String> {
    load(backend.name())
}

/// The sanitizer canaries' PTX.
pub fn canary() -> Result<String> {
    load(catalog::ptx::CANARY_SET)
}

/// The text of PTX `set` (`llvm`, `nvvm`, `nvcc`, `canary`), found and checked as the module
/// documentation says.
pub fn load(set: &str) -> Result<String> {
    read(set, &find(set)?)
}

/// The text of PTX `set` at `path`, gunzipped when its name ends in `.gz`.
fn read(set: &str, path: &Path) -> Result<String> {
    let unreadable = |e: std::io::Error| {
        HostError::Ptx(format!(
            "cannot read the {set} PTX at {}: {e}",
            path.display()
        ))
    };
    let bytes = std::fs::read(path).map_err(unreadable)?;
    if path.extension().is_none_or(|e| e != "gz") {
        return String::from_utf8(bytes)
            .map_err(|e| unreadable(std::io::Error::new(std::io::ErrorKind::InvalidData, e)));
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
        .map_err(unreadable)?;
    Ok(text)
}

/// Where PTX `set` is: in `dist/` beside this binary, else in the tree it was built from (and
/// newer than the kernel sources there).
pub fn find(set: &str) -> Result<PathBuf> {
    let exe = std::env::current_exe().ok();
    locate(set, exe.as_deref().and_then(Path::parent), &built_in())
}

/// [`find`] for a binary in `beside`, built in the tree at `root`.
fn locate(set: &str, beside: Option<&Path>, root: &Path) -> Result<PathBuf> {
    if let Some(p) = beside
        .into_iter()
        .flat_map(|d| [Some(d), d.parent()])
        .flatten()
        .filter(|d| d.join(catalog::ptx::DIST_MANIFEST).is_file())
        .map(|d| d.join(catalog::ptx::dist_path(set)))
        .find(|p| p.is_file())
    {
        return Ok(p);
    }
    let path = root.join(catalog::ptx::set_path(set));
    if !path.is_file() {
        return Err(HostError::Ptx(format!(
            "no {set} PTX at {}{}: run `cargo xtask ptx` (for a GPU machine, `cargo xtask dist` puts it in dist/ptx/)",
            path.display(),
            beside.map_or(String::new(), |d| format!(
                " nor a dist/ptx/ beside {}",
                d.display()
            ))
        )));
    }
    let (sources, dir) = sources(root, set);
    let newest = sources.iter().filter_map(|p| modified(p)).max();
    if newest.is_some_and(|s| modified(&path).is_some_and(|p| p < s)) {
        return Err(HostError::Ptx(format!(
            "the {set} PTX at {} is older than the kernel sources in {dir}: run `cargo xtask ptx`",
            path.display()
        )));
    }
    Ok(path)
}

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The sources PTX `set` is built from under `root`, and their folder as the message names
/// it: the CUDA C++ twins for nvcc, else `gpu-kernels/Cargo.toml` and every `.rs` under
/// `gpu-kernels/src`.
pub fn sources(root: &Path, set: &str) -> (Vec<PathBuf>, &'static str) {
    if set == Backend::Nvcc.name() {
        return (
            vec![root.join("gpu-kernels/cuda/kernels.cu")],
            "gpu-kernels/cuda/",
        );
    }
    let dir = root.join("gpu-kernels");
    let mut out = vec![dir.join("Cargo.toml")];
    let mut stack = vec![dir.join("src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    (out, "gpu-kernels/")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In the tree, every set `cargo xtask ptx` writes is found and no older than its
    /// sources: what a `Lab` loads on a GPU machine, checked here without one.
    #[test]
    fn every_ptx_set_is_found_and_fresh() {
        for set in Backend::ALL
            .map(|b| b.name())
            .into_iter()
            .chain([catalog::ptx::CANARY_SET])
        {
            let text = load(set).unwrap_or_else(|e| panic!("{e}"));
            assert!(text.contains(".entry"), "{set}");
        }
    }

    #[test]
    fn the_sources_of_each_set_are_its_compilers_inputs() {
        let root = built_in();
        let (cuda, dir) = sources(&root, "nvcc");
        assert_eq!((cuda.len(), dir), (1, "gpu-kernels/cuda/"));
        let (rust, dir) = sources(&root, "llvm");
        assert_eq!(dir, "gpu-kernels/");
        assert!(
            rust.iter().any(|p| p.ends_with("src/reduce.rs")),
            "{rust:?}"
        );
        assert!(
            rust.iter()
                .all(|p| p.extension().is_some_and(|x| x == "rs" || x == "toml"))
        );
    }

    /// A missing set names the file and the command that makes it, in one line.
    #[test]
    fn a_missing_set_says_what_to_run() {
        let e = load("nonexistent").unwrap_err().to_string();
        assert!(e.starts_with("no nonexistent PTX at "), "{e}");
        assert!(
            e.contains("run `cargo xtask ptx`") && !e.contains('\n'),
            "{e}"
        );
    }

    fn write_at(path: &Path, text: &[u8], at: SystemTime) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(at).unwrap();
    }

    /// A tree and a `dist/` in a scratch folder: the tree's PTX is refused once a kernel source
    /// is newer; `dist/`'s gzipped PTX is taken as built with its binaries, but only where
    /// its manifest says it is a `dist/`.
    #[test]
    fn tree_ptx_must_be_fresh_and_dist_ptx_comes_with_its_manifest() {
        use std::time::Duration;
        let scratch = std::env::temp_dir().join(format!("host-ptx-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        let (root, dist) = (scratch.join("tree"), scratch.join("dist"));
        let then = SystemTime::now() - Duration::from_secs(3600);
        let ptx = ".version 8.0\n.visible .entry k()\n{\n\tret;\n}\n";
        write_at(&root.join("gpu-kernels/src/lib.rs"), b"", then);
        write_at(&root.join("gpu-kernels/Cargo.toml"), b"", then);
        let built = root.join(catalog::ptx::set_path("llvm"));
        write_at(&built, ptx.as_bytes(), then + Duration::from_secs(60));
        assert_eq!(locate("llvm", None, &root).unwrap(), built);
        write_at(
            &root.join("gpu-kernels/src/lib.rs"),
            b"",
            then + Duration::from_secs(120),
        );
        let e = locate("llvm", None, &root).unwrap_err().to_string();
        assert!(
            e.contains("is older than the kernel sources in gpu-kernels/: run `cargo xtask ptx`"),
            "{e}"
        );

        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, ptx.as_bytes()).unwrap();
        let packed = dist.join(catalog::ptx::dist_path("llvm"));
        write_at(&packed, &gz.finish().unwrap(), then);
        // No manifest: not a dist/, so the tree's stale PTX is still the one found.
        assert!(locate("llvm", Some(&dist.join("tests")), &root).is_err());
        write_at(
            &dist.join(catalog::ptx::DIST_MANIFEST),
            b"commit: x\n",
            then,
        );
        for binary_in in [dist.clone(), dist.join("tests")] {
            let found = locate("llvm", Some(&binary_in), &root).unwrap();
            assert_eq!(found, packed);
            assert_eq!(read("llvm", &found).unwrap(), ptx);
        }
        std::fs::remove_dir_all(&scratch).unwrap();
    }
}
