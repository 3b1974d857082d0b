//! `lab run --predict`: each selected kernel's predicted time, without touching a GPU. The
//! rates are a bench run's measured roofs (`--roofs FILE`, else the newest results file under
//! `results/bench/`), the counts the catalogue's (`catalog::model`); the output names the file
//! and where each roof came from.

use super::Named;
use super::plan::{RunKernel, select};
use crate::error::{HostError, Result};
use catalog::model::check::{self, RoofSet};
use catalog::model::{Counts, Problem, RULE, predict};
use catalog::records::Report;
use catalog::{Backend, Runner};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where `--predict` looks when no `--roofs` is given.
pub const RESULTS_DIR: &str = "results/bench";

/// Prints the prediction of every kernel `req` selects, at its sizes, from the roofs of
/// `roofs_file` (else the newest results file under [`RESULTS_DIR`]).
pub fn run_cli(req: &Named, roofs_file: Option<&Path>) -> Result<()> {
    let kernels = select(&req.kernels)?;
    let path = match roofs_file {
        Some(p) => p.to_path_buf(),
        None => newest(Path::new(RESULTS_DIR))?,
    };
    let report = read(&path)?;
    let Some(set) = check::roofs_of(&report) else {
        return Err(invalid(format!(
            "{} holds no roofs record and no read-stream or D2D-copy rows: pass --roofs with a \
             lab bench results file",
            path.display()
        )));
    };
    print!("{}", text(req, &kernels, &path, &report, &set));
    Ok(())
}

/// The whole output: the file and its roofs, the rule, then one block per kernel.
fn text(req: &Named, kernels: &[RunKernel], path: &Path, report: &Report, set: &RoofSet) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "lab run --predict: roofs of {} ({}, {} SMs; commit {}, {}), no GPU touched",
        path.display(),
        report.device.name,
        report.device.sm_count,
        report.commit.get(..12).unwrap_or(&report.commit),
        report.date
    );
    s += &check::sources_table(set);
    let _ = writeln!(s, "rule: {RULE}");
    let backends = req.which.backends();
    for &k in kernels {
        let via: Vec<Option<Backend>> = match k.kernel.library {
            Some(_) => vec![None],
            None => backends
                .iter()
                .filter(|&&b| k.kernel.carried_by(b))
                .map(|&b| Some(b))
                .collect(),
        };
        // One prediction per compiler (each runs its own trees); compilers predicted alike
        // share one.
        let size = k.model_size(req.sizes);
        let mut alike: Vec<(String, Vec<&str>)> = Vec::new();
        for backend in via {
            let problem = Problem {
                dtype: k.dtype,
                size,
                sm_count: report.device.sm_count,
                backend,
            };
            let body = match predict(k.kernel, &problem, &set.roofs) {
                Some(p) => format!(
                    "predicted {}\n  counts: {}",
                    p.describe(),
                    counts(&p.counts)
                ),
                None if k.kernel.counts.is_none() => {
                    "no counts (a roof or the launch-gap demo): nothing to predict".into()
                }
                None => "none of its roofs was measured in that run".into(),
            };
            let name = Runner::of(backend).name();
            match alike.iter_mut().find(|(b, _)| *b == body) {
                Some((_, names)) => names.push(name),
                None => alike.push((body, vec![name])),
            }
        }
        for (body, names) in alike {
            let head = format!(
                "{} [{}] {} {}",
                k.name(),
                names.join(", "),
                k.dtype,
                size.label()
            );
            let _ = writeln!(s, "\n{head}: {body}");
        }
    }
    s
}

/// `65,536 blocks, 64.0 MiB read, …`: the counts that are not zero.
fn counts(c: &Counts) -> String {
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
    let mut parts = vec![match c.launches {
        1 => "1 launch".to_string(),
        n => format!("{n} launches"),
    }];
    let mut add = |n: u64, what: String| {
        if n > 0 {
            parts.push(what);
        }
    };
    add(c.blocks, format!("{} blocks", grouped(c.blocks)));
    add(c.read_bytes, format!("{} read", mib(c.read_bytes)));
    add(c.written_bytes, format!("{} written", mib(c.written_bytes)));
    add(
        c.same_address_reds,
        format!("{} reds to one word", grouped(c.same_address_reds)),
    );
    add(c.barriers, format!("{} barriers", grouped(c.barriers)));
    add(
        c.shared_wavefronts,
        format!("{} shared wavefronts", grouped(c.shared_wavefronts)),
    );
    add(
        c.global_wavefronts,
        format!(
            "{} coalesced global wavefronts",
            grouped(c.global_wavefronts)
        ),
    );
    add(
        c.scattered_sectors,
        format!(
            "{} L2 sectors (stores scattered)",
            grouped(c.scattered_sectors)
        ),
    );
    add(
        c.tile_order_bytes,
        format!("{} in the 32x32 tile order", mib(c.tile_order_bytes)),
    );
    add(c.flops, format!("{} FLOP", grouped(c.flops)));
    parts.join(", ")
}

/// `1,048,576`.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn invalid(detail: String) -> HostError {
    HostError::Invalid {
        what: "--predict",
        detail,
    }
}

fn read(path: &Path) -> Result<Report> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| invalid(format!("cannot read '{}': {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        invalid(format!(
            "'{}' is not a lab bench results file ({e}): pass --roofs with one",
            path.display()
        ))
    })
}

/// The results file under `dir` with the latest `date` among those `--predict` can use (a
/// lab bench file with a roofs record or the ceiling rows to derive them).
pub fn newest(dir: &Path) -> Result<PathBuf> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        invalid(format!(
            "no results under '{}' ({e}): run lab bench first, or pass --roofs FILE",
            dir.display()
        ))
    })?;
    let mut best: Option<(String, PathBuf)> = None;
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(r) = read(&p) else {
            continue;
        };
        if r.tool != "lab bench" || check::roofs_of(&r).is_none() {
            continue;
        }
        if best.as_ref().is_none_or(|(d, _)| r.date > *d) {
            best = Some((r.date, p));
        }
    }
    best.map(|(_, p)| p).ok_or_else(|| {
        invalid(format!(
            "no lab bench results file with roofs under '{}': run lab bench first, or pass \
             --roofs FILE",
            dir.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::Which;
    use catalog::records::Sizes;

    fn repo(p: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(p)
    }

    fn request(kernels: &str) -> Named {
        Named {
            kernels: kernels.into(),
            which: Which::All,
            sizes: Sizes {
                n: 1 << 28,
                rows: 8192,
                cols: 8192,
                offset: 0,
            },
        }
    }

    #[test]
    fn a_prediction_names_its_file_its_roofs_and_each_kernels_bound() {
        let path = repo("results/bench/nvidia-h200-default-20261130T092735Z.json");
        let report = read(&path).unwrap();
        let set = check::roofs_of(&report).unwrap();
        let req = request("v6,transpose_padded,bump");
        let kernels = select(&req.kernels).unwrap();
        let t = text(&req, &kernels, &path, &report, &set);
        assert!(
            t.contains("nvidia-h200-default-20261130T092735Z.json"),
            "{t}"
        );
        assert!(
            t.contains("read_stream") && t.contains("rule: predicted"),
            "{t}"
        );
        // v6 at 2^28: one wave, the read stream binds.
        assert!(
            t.contains("reduce_v6 [llvm, nvvm, nvcc] f32 2^28: predicted read "),
            "{t}"
        );
        assert!(t.contains("1,056 blocks, 1024.0 MiB read"), "{t}");
        assert!(
            t.contains("transpose_padded [llvm, nvvm, nvcc] f32 8192x8192: predicted copy"),
            "{t}"
        );
        assert!(
            t.contains("bump [llvm, nvvm, nvcc] f32 2^28: no counts"),
            "{t}"
        );
        // The file measured no same-address red: the atomic roof is named as missing.
        assert!(t.contains("not measured: atomic"), "{t}");
    }

    #[test]
    fn the_newest_usable_file_is_found_and_an_empty_folder_is_refused() {
        let p = newest(&repo("results/bench")).unwrap();
        assert!(p.extension().is_some_and(|x| x == "json"));
        let empty = std::env::temp_dir().join(format!("lab-predict-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let e = newest(&empty).unwrap_err().to_string();
        assert!(e.contains("pass --roofs FILE"), "{e}");
        std::fs::remove_dir_all(&empty).unwrap();
        assert_eq!(grouped(1_048_576), "1,048,576");
        assert_eq!(grouped(56), "56");
    }
}
