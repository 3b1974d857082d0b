//! What is compared with what: the [`Axis`] that differs between A and B, and the results
//! rows paired along it (everything else equal: element type, size, cache, and the kernel or
//! compiler that is not the axis).

use catalog::records::{Cache, Row, Status};
use catalog::{Backend, Dtype, Runner};
use serde::Serialize;

/// What differs between A and B.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Axis {
    /// Two kernels, each on the same compiler(s).
    Kernels { a: String, b: String },
    /// One kernel from two compilers.
    Backends {
        kernel: String,
        a: Backend,
        b: Backend,
    },
    /// The same rows measured twice: two results files (two runs, two commits).
    Runs,
}

impl Axis {
    /// Which side a row belongs to: A, B, both (runs), or neither.
    fn side(&self, r: &Row) -> (bool, bool) {
        match self {
            Axis::Kernels { a, b } => (r.kernel == *a, r.kernel == *b),
            Axis::Backends { kernel, a, b } => (
                r.kernel == *kernel && r.backend == *a,
                r.kernel == *kernel && r.backend == *b,
            ),
            Axis::Runs => (true, true),
        }
    }

    /// What a row shares with its partner on the other side.
    fn key(&self, r: &Row) -> Key {
        let (kernel, backend) = match self {
            Axis::Kernels { .. } => (String::new(), Some(r.backend)),
            Axis::Backends { .. } => (String::new(), None),
            Axis::Runs => (r.kernel.clone(), Some(r.backend)),
        };
        (kernel, backend, r.dtype, r.size.clone(), r.cache)
    }

    /// A pair's name: what changes, then what both share.
    /// `reduce_v3 → reduce_v5 [llvm] f32 2^28`, `reduce_v4 [llvm → nvcc] f32 2^28`,
    /// `reduce_v4 [llvm] f32 2^28`.
    pub fn label(&self, a: &Row) -> String {
        let what = match self {
            Axis::Kernels { a: ka, b: kb } => format!("{ka} → {kb} [{}]", a.backend),
            Axis::Backends {
                kernel,
                a: ba,
                b: bb,
            } => format!("{kernel} [{ba} → {bb}]"),
            Axis::Runs => format!("{} [{}]", a.kernel, a.backend),
        };
        let cache = match a.cache {
            Cache::Hot => String::new(),
            Cache::Cold => format!(" ({})", a.cache.label()),
        };
        format!("{what} {} {}{cache}", a.dtype, a.size)
    }

    /// `A` or `B` as the header names them: the kernels, the compilers, or "the first run".
    pub fn side_names(&self) -> (String, String) {
        match self {
            Axis::Kernels { a, b } => (a.clone(), b.clone()),
            Axis::Backends { kernel, a, b } => {
                (format!("{kernel} [{a}]"), format!("{kernel} [{b}]"))
            }
            Axis::Runs => ("first run".into(), "second run".into()),
        }
    }
}

/// Kernel, runner, element type, size and cache (the kernel or the runner left out where it
/// is the axis).
type Key = (String, Option<Runner>, Dtype, String, Cache);

/// Which rows take part (empty: any).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub kernels: Vec<String>,
    pub backends: Vec<Backend>,
    pub dtypes: Vec<Dtype>,
}

impl Filter {
    fn admits(&self, r: &Row) -> bool {
        let kernel = self.kernels.is_empty() || self.kernels.contains(&r.kernel);
        let backend = self.backends.is_empty() || self.backends.iter().any(|&b| r.backend == b);
        let dtype = self.dtypes.is_empty() || self.dtypes.contains(&r.dtype);
        kernel && backend && dtype
    }
}

/// One row of A and its partner in B.
#[derive(Clone, Debug)]
pub struct Pair {
    pub label: String,
    pub a: Row,
    pub b: Row,
}

/// The rows paired, and what could not be.
#[derive(Clone, Debug, Default)]
pub struct Pairing {
    pub pairs: Vec<Pair>,
    /// Rows of one side with no partner on the other (labels).
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Pairs left out because a side did not verify (`label: failed in B`).
    pub not_ok: Vec<String>,
}

/// Pairs A's rows with B's along `axis`, in A's order.
pub fn pair(axis: &Axis, filter: &Filter, rows_a: &[Row], rows_b: &[Row]) -> Pairing {
    let a: Vec<&Row> = rows_a
        .iter()
        .filter(|r| filter.admits(r) && axis.side(r).0)
        .collect();
    let b: Vec<&Row> = rows_b
        .iter()
        .filter(|r| filter.admits(r) && axis.side(r).1)
        .collect();
    let mut out = Pairing::default();
    let mut used = vec![false; b.len()];
    for ra in &a {
        let k = axis.key(ra);
        let Some(i) = (0..b.len()).find(|&i| !used[i] && axis.key(b[i]) == k) else {
            out.only_a.push(ra.label());
            continue;
        };
        used[i] = true;
        let rb = b[i];
        let label = axis.label(ra);
        let failed = |r: &Row| r.status != Status::Ok || r.median_us.is_none();
        match (failed(ra), failed(rb)) {
            (false, false) => out.pairs.push(Pair {
                label,
                a: (*ra).clone(),
                b: rb.clone(),
            }),
            (fa, fb) => out.not_ok.push(format!(
                "{label}: {} in {}",
                if fa { status(ra) } else { status(rb) },
                match (fa, fb) {
                    (true, true) => "A and B",
                    (true, false) => "A",
                    _ => "B",
                }
            )),
        }
    }
    out.only_b = b
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(r, _)| r.label())
        .collect();
    out
}

fn status(r: &Row) -> &'static str {
    match r.status {
        Status::Ok => "not timed",
        Status::Failed => "failed",
        Status::Skipped => "skipped",
    }
}

/// `a, b, c and 4 more`: a list cut for one line.
pub fn some(labels: &[String], most: usize) -> String {
    if labels.len() <= most {
        return labels.join(", ");
    }
    format!(
        "{} and {} more",
        labels[..most].join(", "),
        labels.len() - most
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::Family;

    fn row(kernel: &str, backend: &str, dtype: &str, size: &str) -> Row {
        let (backend, dtype): (Runner, Dtype) = (backend.parse().unwrap(), dtype.parse().unwrap());
        let mut r = Row::new(Family::Reduce, kernel, backend, dtype, 1, size.into(), 4);
        r.status = Status::Ok;
        r.median_us = Some(1.0);
        r
    }

    #[test]
    fn two_kernels_pair_by_backend_dtype_and_size() {
        let a = vec![
            row("reduce_v3", "llvm", "f32", "2^28"),
            row("reduce_v3", "nvvm", "f32", "2^28"),
            row("read_stream", "llvm", "f32", "2^28"),
        ];
        let b = vec![
            row("reduce_v5", "nvvm", "f32", "2^28"),
            row("reduce_v5", "llvm", "f32", "2^28"),
            row("reduce_v5", "llvm", "i32", "2^28"),
        ];
        let axis = Axis::Kernels {
            a: "reduce_v3".into(),
            b: "reduce_v5".into(),
        };
        let p = pair(&axis, &Filter::default(), &a, &b);
        let labels: Vec<&str> = p.pairs.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "reduce_v3 → reduce_v5 [llvm] f32 2^28",
                "reduce_v3 → reduce_v5 [nvvm] f32 2^28"
            ]
        );
        assert_eq!(p.pairs[1].b.backend, Backend::Nvvm);
        assert!(
            p.only_a.is_empty(),
            "the ceiling is neither side: {:?}",
            p.only_a
        );
        assert_eq!(p.only_b, ["reduce_v5 [llvm] i32 2^28"]);
    }

    #[test]
    fn one_kernel_pairs_two_backends() {
        let rows = vec![
            row("reduce_v4", "llvm", "f32", "2^28"),
            row("reduce_v4", "nvcc", "f32", "2^28"),
            row("reduce_v4", "nvvm", "f32", "2^28"),
        ];
        let axis = Axis::Backends {
            kernel: "reduce_v4".into(),
            a: Backend::Llvm,
            b: Backend::Nvcc,
        };
        let p = pair(&axis, &Filter::default(), &rows, &rows);
        assert_eq!(p.pairs.len(), 1);
        assert_eq!(p.pairs[0].label, "reduce_v4 [llvm → nvcc] f32 2^28");
        assert_eq!(
            (p.pairs[0].a.backend, p.pairs[0].b.backend),
            (Backend::Llvm.into(), Backend::Nvcc.into())
        );
        assert_eq!(axis.side_names().1, "reduce_v4 [nvcc]");
    }

    #[test]
    fn two_runs_pair_row_for_row_and_report_the_rest() {
        let mut failed = row("reduce_v6", "llvm", "i32", "2^28");
        failed.status = Status::Failed;
        let a = vec![
            row("reduce_v6", "llvm", "f32", "2^28"),
            row("reduce_v6", "llvm", "i32", "2^28"),
            row("reduce_v7", "llvm", "f32", "2^28"),
        ];
        let b = vec![
            failed,
            row("reduce_v6", "llvm", "f32", "2^28"),
            row("reduce_v6", "llvm", "f32", "2^28").with_cache(Cache::Cold),
        ];
        let p = pair(&Axis::Runs, &Filter::default(), &a, &b);
        assert_eq!(p.pairs.len(), 1);
        assert_eq!(p.pairs[0].label, "reduce_v6 [llvm] f32 2^28");
        assert_eq!(p.not_ok, ["reduce_v6 [llvm] i32 2^28: failed in B"]);
        assert_eq!(p.only_a, ["reduce_v7 [llvm] f32 2^28"]);
        assert_eq!(p.only_b, ["reduce_v6 [llvm] f32 2^28 (cold L2)"]);
        let only_i32 = Filter {
            dtypes: vec![Dtype::I32],
            ..Filter::default()
        };
        let p = pair(&Axis::Runs, &only_i32, &a, &b);
        assert!(p.pairs.is_empty() && p.only_a.is_empty() && p.only_b.is_empty());
        assert_eq!(p.not_ok.len(), 1);
    }

    #[test]
    fn long_lists_are_cut() {
        let l: Vec<String> = (1..=5).map(|i| i.to_string()).collect();
        assert_eq!(some(&l, 3), "1, 2, 3 and 2 more");
        assert_eq!(some(&l[..2], 3), "1, 2");
    }
}
