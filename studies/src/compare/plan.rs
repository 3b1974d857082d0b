//! A and B resolved into a plan: two kernels, one kernel from two compilers, or two results
//! files, to run live or to read; every refusal is one line.

use super::CompareRequest;
use super::live;
use super::pairs::{Axis, Filter, Pairing, some};
use anyhow::{Result, bail};
use catalog::records::Report as Results;
use catalog::{Backend, Dtype};
use std::path::{Path, PathBuf};

/// Live runs without `--backend` / `--dtype`: one compiler, one type (a round is two lab
/// processes; keep them short).
pub const LIVE_BACKEND: Backend = Backend::Llvm;
pub const LIVE_DTYPE: Dtype = Dtype::F32;

/// Where the rows come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// Run `lab bench` for each side.
    Live {
        axis: Axis,
        filter: Filter,
        a: live::Side,
        b: live::Side,
    },
    /// Read results files: A's rows from `a`, B's from `b` (the same file for two kernels).
    Files {
        axis: Axis,
        filter: Filter,
        a: PathBuf,
        b: PathBuf,
    },
}

/// `true` when `s` names a results file rather than a kernel.
pub(super) fn is_file(s: &str) -> bool {
    s.ends_with(".json") || Path::new(s).is_file()
}

/// A side's kernel: exactly one catalogue kernel, without an element type.
pub(super) fn kernel(name: &str) -> Result<&'static catalog::Kernel> {
    let sel = catalog::select(name).map_err(|e| anyhow::anyhow!("{e}"))?;
    match sel[..] {
        [s] if s.dtype.is_none() => Ok(s.kernel),
        [s] => bail!(
            "'{name}' names an element type: name the kernel ({}) and pick the type with --dtype",
            s.kernel.name
        ),
        _ => bail!(
            "'{name}' names {} kernels ({}): name one",
            sel.len(),
            sel.iter()
                .map(|s| s.kernel.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What to run or read, from the request; every refusal is one line.
pub fn plan(req: &CompareRequest) -> Result<Plan> {
    let dtypes = req.dtypes.clone();
    if is_file(&req.a) {
        let Some(b) = req.b.as_deref().filter(|b| is_file(b)) else {
            bail!(
                "compare {} needs a second results file to compare with (or two kernels)",
                req.a
            );
        };
        if !req.from.is_empty() {
            bail!("--from reads the rows of two kernels; A and B are results files already");
        }
        // Resolved once the files are read: they may hold kernels the catalogue no longer has.
        return Ok(Plan::Files {
            axis: Axis::Runs,
            filter: Filter {
                kernels: req.kernels.clone(),
                backends: req.backends.clone(),
                dtypes,
            },
            a: PathBuf::from(&req.a),
            b: PathBuf::from(b),
        });
    }
    if req.b.as_deref().is_some_and(is_file) {
        bail!("give two kernels or two results files, not one of each");
    }
    if !req.kernels.is_empty() {
        bail!("--kernel filters two results files; with kernels, name them as A and B");
    }
    let ka = kernel(&req.a)?;
    let live = req.from.is_empty();
    let (axis, backends_a, backends_b) = match req.b.as_deref() {
        Some(b) => {
            let kb = kernel(b)?;
            let backends = match (&req.backends[..], live) {
                ([], true) => vec![LIVE_BACKEND],
                (list, _) => list.to_vec(),
            };
            let axis = Axis::Kernels {
                a: ka.name.into(),
                b: kb.name.into(),
            };
            (axis, backends.clone(), backends)
        }
        None => {
            let [x, y] = req.backends[..] else {
                bail!(
                    "compare {} with one kernel compares two compilers: add --backend llvm,nvcc (or name two kernels)",
                    req.a
                );
            };
            let axis = Axis::Backends {
                kernel: ka.name.into(),
                a: x,
                b: y,
            };
            (axis, vec![x], vec![y])
        }
    };
    let kb = match &axis {
        Axis::Kernels { b, .. } => kernel(b)?,
        _ => ka,
    };
    let filter = Filter {
        kernels: Vec::new(),
        backends: match axis {
            Axis::Kernels { .. } => backends_a.clone(),
            _ => Vec::new(),
        },
        dtypes,
    };
    if !live {
        let (a, b) = match &req.from[..] {
            [f] => (f.clone(), f.clone()),
            [f, g] => (f.clone(), g.clone()),
            _ => bail!("--from takes one results file (both kernels' rows) or two (A's, then B's)"),
        };
        return Ok(Plan::Files { axis, filter, a, b });
    }
    for (k, backends) in [(ka, &backends_a), (kb, &backends_b)] {
        if let Some(b) = backends.iter().find(|b| !k.carried_by(**b)) {
            bail!(
                "{} is not compiled by {b} (it is by {}): pick another --backend",
                k.name,
                Backend::ALL
                    .into_iter()
                    .filter(|x| k.carried_by(*x))
                    .map(Backend::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    // A kernel of one entry (the fault catalogue's, the roofs') has one element type: no
    // filter picks it.
    let typed = !(ka.dtypes.is_empty() && kb.dtypes.is_empty());
    Ok(Plan::Live {
        axis,
        filter: Filter {
            dtypes: if req.dtypes.is_empty() && typed {
                vec![LIVE_DTYPE]
            } else {
                filter.dtypes
            },
            ..filter
        },
        a: live::Side {
            name: 'a',
            kernel: ka.name.into(),
            backends: backends_a,
        },
        b: live::Side {
            name: 'b',
            kernel: kb.name.into(),
            backends: backends_b,
        },
    })
}

/// `--kernel` names against two results files: a kernel either file has by that name, else the
/// catalogue's kernel the name selects (`v6`).
pub(super) fn file_kernels(names: &[String], a: &Results, b: &Results) -> Result<Vec<String>> {
    let mut held: Vec<&str> = a
        .rows
        .iter()
        .chain(&b.rows)
        .map(|r| r.kernel.as_str())
        .collect();
    held.dedup();
    names
        .iter()
        .map(|n| {
            if held.contains(&n.as_str()) {
                return Ok(n.clone());
            }
            match kernel(n) {
                Ok(k) if held.contains(&k.name) => Ok(k.name.to_string()),
                _ => {
                    let mut all = held.clone();
                    all.sort_unstable();
                    all.dedup();
                    bail!(
                        "'{n}' names no kernel of these files (they hold {})",
                        all.join(", ")
                    )
                }
            }
        })
        .collect()
}

/// The notes a pairing leaves: rows without a partner, pairs that did not verify.
pub(super) fn pairing_notes(p: &Pairing) -> Vec<String> {
    let mut n = Vec::new();
    if !p.only_a.is_empty() {
        n.push(format!("only in A, not compared: {}", some(&p.only_a, 4)));
    }
    if !p.only_b.is_empty() {
        n.push(format!("only in B, not compared: {}", some(&p.only_b, 4)));
    }
    for x in &p.not_ok {
        n.push(format!("not compared: {x}"));
    }
    n
}
