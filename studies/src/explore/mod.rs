//! `cargo xtask explore`: one self-contained HTML page per kernel, or per pair (two kernels on
//! one compiler, or one kernel on two), with the source (Rust, or the `.cu` twin for nvcc),
//! the PTX and the SASS in columns, linked both ways through the source line each instruction
//! is charged to; SASS rows carry their control bits, live registers and scoreboard waits, and,
//! from a profile capture, the warp-state samples of each instruction as a heat column.
//!
//! Everything the page needs is inside it (style, script, text): it opens from a file with no
//! network. The listings come from [`crate::asm`]; the samples from the capture's ncu Source
//! page through [`profiler::source::instruction_samples`], the one function of the
//! profiler this module calls.

pub mod html;
pub mod page;

use crate::asm::{self, Build};
use anyhow::{Result, bail};
use catalog::Backend;
use std::path::{Path, PathBuf};

/// The committed capture with warp-state samples: reduce_v3, reduce_v6 and transpose_tiled on
/// llvm, nvvm and nvcc (`<dir>/src-<backend>.source-sass.csv`, or `.csv.gz`).
pub const CAPTURE: &str = "xtask/tests/fixtures/ncu/capture";

/// What to draw.
pub struct ExploreRequest {
    /// One kernel pattern (`reduce_v3`, `reduce_v3_f32`), or two to put side by side.
    pub kernels: Vec<String>,
    /// One backend, or two for one kernel on two compilers.
    pub backends: Vec<Backend>,
    /// PTX files to read instead of the lab's (written elsewhere: Triton's, `nvcc -ptx`): one,
    /// or two side by side (one kernel before and after a change); each one's compiler is read
    /// from its header, and `backends` is not asked.
    pub ptx: Vec<PathBuf>,
    /// A capture folder holding `src-<backend>.source-sass.csv[.gz]`.
    pub capture: Option<PathBuf>,
    pub out: PathBuf,
}

/// The capture stem of `backend` in `dir`: `dir/src-<backend>`.
pub fn capture_stem(dir: &Path, backend: Backend) -> PathBuf {
    dir.join(format!("src-{}", backend.name()))
}

/// Writes the pages; returns their paths.
pub fn run(req: &ExploreRequest) -> Result<Vec<PathBuf>> {
    let backends = if req.ptx.is_empty() {
        req.backends.len()
    } else {
        req.ptx.len()
    };
    match (req.kernels.len(), backends) {
        (1 | 2, 1) | (1, 2) => {}
        (0, _) => bail!("name a kernel: cargo xtask explore --kernel reduce_v3"),
        (_, 0) => bail!("name a backend: --backend llvm"),
        _ if !req.ptx.is_empty() => bail!(
            "explore shows two kernels of one PTX file, or one kernel of two: got {} kernels \
             and {} files",
            req.kernels.len(),
            req.ptx.len()
        ),
        _ => bail!(
            "explore shows two kernels on one backend, or one kernel on two backends: got {} \
             kernels and {} backends",
            req.kernels.len(),
            req.backends.len()
        ),
    }
    let mut builds = asm::load_builds(&req.ptx, Some(&req.backends), false)?;
    // (build, entry) for each pane of each page.
    let mut pages: Vec<Vec<(usize, String)>> = Vec::new();
    if req.kernels.len() == 2 {
        let (a, b) = (&req.kernels[0], &req.kernels[1]);
        let (ka, kb) = (entries(&builds[0], a)?, entries(&builds[0], b)?);
        if ka.len() != kb.len() {
            bail!(
                "'{a}' names {} kernels and '{b}' {}: name one each",
                ka.len(),
                kb.len()
            );
        }
        pages.extend(ka.into_iter().zip(kb).map(|(x, y)| vec![(0, x), (0, y)]));
    } else {
        let k = &req.kernels[0];
        let first = entries(&builds[0], k)?;
        for e in first {
            let mut panes = vec![(0, e.clone())];
            if builds.len() == 2 {
                if builds[1].module.entry(&e).is_none() {
                    bail!("no kernel '{e}' in the {} PTX", builds[1].backend);
                }
                panes.push((1, e));
            }
            pages.push(panes);
        }
    }
    std::fs::create_dir_all(&req.out)?;
    let mut written = Vec::new();
    for panes in pages {
        let mut built = Vec::new();
        for (id, (bi, kernel)) in ["a", "b"].iter().zip(&panes) {
            let b: &mut Build = &mut builds[*bi];
            let samples = samples(req.capture.as_deref(), b.backend, kernel);
            built.push(page::pane(id, b, kernel, samples)?);
        }
        let path = req.out.join(file_name(&built));
        std::fs::write(&path, html::render(&built)?)?;
        written.push(path);
    }
    Ok(written)
}

/// `reduce_v3_f32.llvm.html`, `reduce_v3_f32-vs-reduce_v5_f32.llvm.html`,
/// `reduce_v3_f32.llvm-vs-nvvm.html`.
fn file_name(panes: &[page::Pane]) -> String {
    match panes {
        [a, b] if a.kernel == b.kernel => match (&a.file, &b.file) {
            (Some(x), Some(y)) => format!("{}.{}-vs-{}.html", a.kernel, stem(x), stem(y)),
            _ => format!("{}.{}-vs-{}.html", a.kernel, a.backend, b.backend),
        },
        [a, b] => format!("{}-vs-{}.{}.html", a.kernel, b.kernel, a.backend),
        [a] => format!("{}.{}.html", a.kernel, a.backend),
        _ => "explore.html".into(),
    }
}

/// `old.ptx` → `old`.
fn stem(file: &str) -> &str {
    file.strip_suffix(".ptx").unwrap_or(file)
}

fn entries(b: &Build, pattern: &str) -> Result<Vec<String>> {
    let ks = b.kernels(&[pattern.to_string()]);
    if ks.is_empty() {
        bail!("no kernel matches '{pattern}' in the {} PTX", b.backend);
    }
    Ok(ks)
}

/// The capture's samples of `kernel`, or why there are none.
fn samples(dir: Option<&Path>, backend: Backend, kernel: &str) -> page::Samples {
    let Some(dir) = dir else {
        return page::Samples::None;
    };
    let stem = capture_stem(dir, backend);
    match profiler::source::instruction_samples(&stem, kernel) {
        Ok(insts) => page::Samples::Read {
            from: stem
                .strip_prefix(crate::util::root())
                .unwrap_or(&stem)
                .display()
                .to_string(),
            insts,
        },
        Err(e) => page::Samples::Missing(
            format!("{e:#}").replace(&format!("{}/", crate::util::root().display()), ""),
        ),
    }
}
