//! Part II's one table: each row-wise op × shape × dtype, the Rust kernels (both compilers, the
//! schedule the catalogue chooses) and the C++ twin beside PyTorch eager, torch.compile, Liger
//! and Triton, each as GB/s and × the D2D copy of the same matrix measured in its own run (the
//! lab's `lab bench --kernel rows` writes `rows-<stem>.json`; `gpu/rows/peers.py` writes
//! `peers.json`). With `peers.py --lab`, the peers' file also holds the Rust kernels timed in
//! the peers' own rotation: the column `rust in peers' run`, and the peer verdict is then
//! taken by that one method, with whether it lies outside the rotation's spread of rounds
//! ([`Spread`]).

use crate::plot::bars::{BarSeries, Bars, draw};
use anyhow::{Context, Result, bail};
use catalog::Format;
use plotters::style::RGBColor;
use std::collections::BTreeMap;
use std::path::Path;

/// The implementations, in the table's column order: the lab's, then the peers'.
pub const IMPLEMENTATIONS: [&str; 7] = [
    "rust-llvm",
    "rust-nvvm",
    "nvcc",
    "eager",
    "compile",
    "liger",
    "triton",
];
/// The peers' implementations (the best of these is the bar the lab's must clear).
const PEERS: [&str; 4] = ["eager", "compile", "liger", "triton"];
/// The Rust kernels as `peers.py --lab` names them in its file, and the cell each goes to
/// (beside the lab's own `rust-llvm`, `rust-nvvm`).
const IN_ROTATION: [(&str, &str); 2] = [
    ("rust-llvm", "rust-llvm in peers' run"),
    ("rust-nvvm", "rust-nvvm in peers' run"),
];

/// One cell: what an implementation reached on a case.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Cell {
    pub gbps: f64,
    pub x_copy: f64,
    pub median_us: f64,
    /// The fastest and the slowest tenth of its rounds, where the peers' rotation timed it
    /// (`p10_us`, `p90_us` of `peers.json`): what the verdict's spread is read from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p10_p90_us: Option<(f64, f64)>,
}

/// Where Rust's rounds in the peers' rotation lie against the best peer's: `behind` when even
/// Rust's fastest tenth of rounds is slower than the peer's slowest tenth, `ahead` the other
/// way round, else `within` (a verdict the next rotation may turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Spread {
    Behind,
    Within,
    Ahead,
}

impl Spread {
    /// From each side's (p10, p90) round times.
    pub fn of(rust: (f64, f64), peer: (f64, f64)) -> Spread {
        if rust.0 > peer.1 {
            Spread::Behind
        } else if rust.1 < peer.0 {
            Spread::Ahead
        } else {
            Spread::Within
        }
    }

    fn name(self) -> &'static str {
        match self {
            Spread::Behind => "behind",
            Spread::Within => "within",
            Spread::Ahead => "ahead",
        }
    }
}

/// One op × shape × dtype.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Case {
    pub op: String,
    pub rows: u64,
    pub cols: u64,
    pub dtype: String,
    /// Implementation → its cell; absent where it did not run or failed.
    pub cells: BTreeMap<String, Cell>,
    /// The peers' best × copy, and which peer it was.
    pub best_peer: Option<(String, f64)>,
    /// Rust's × copy over the best peer's, less 1, by the peer verdict's method
    /// ([`Case::rust_at_least_best_peer`]): 0.012 is ahead by 1.2 %, −0.003 behind by 0.3 %.
    pub rust_over_best_peer: Option<f64>,
    /// Rust's rounds against the best peer's, where the peers' rotation timed both with their
    /// spread ([`Spread`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_spread: Option<Spread>,
    /// What the L2 held at the peers' timed launches (`peers.py --l2`: `dirty`, `clean`), where
    /// a peers file gave this case cells.
    pub peers_l2: Option<String>,
    /// The Rust kernels' schedule where the table was asked for one (`--schedule`), not the
    /// one the catalogue chooses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
}

impl Case {
    /// The slower of the two Rust compilers where both ran (the rows the issue holds to 0.90).
    pub fn rust_x_copy(&self) -> Option<f64> {
        ["rust-llvm", "rust-nvvm"]
            .iter()
            .filter_map(|i| self.cells.get(*i).map(|c| c.x_copy))
            .reduce(f64::min)
    }

    /// The slower of the two Rust compilers timed in the peers' rotation (`peers.py --lab`).
    pub fn rust_in_rotation(&self) -> Option<f64> {
        IN_ROTATION
            .iter()
            .filter_map(|(_, cell)| self.cells.get(*cell).map(|c| c.x_copy))
            .reduce(f64::min)
    }

    /// Whether Rust is at least as fast as the best peer: by the peers' own timing where
    /// their run timed the Rust kernels too (one method for both sides), else by the lab's
    /// run against its own copy.
    pub fn rust_at_least_best_peer(&self) -> Option<bool> {
        let (rust, peer) = self.rust_and_best_peer()?;
        Some(rust >= peer)
    }

    /// [`Spread`] of the slower Rust compiler in the peers' rotation against the best peer.
    fn spread(&self) -> Option<Spread> {
        let rust = IN_ROTATION
            .iter()
            .filter_map(|(_, cell)| self.cells.get(*cell))
            .min_by(|a, b| a.x_copy.total_cmp(&b.x_copy))?;
        let peer = self.cells.get(&self.best_peer.as_ref()?.0)?;
        Some(Spread::of(rust.p10_p90_us?, peer.p10_p90_us?))
    }

    /// Rust's × copy by the peer verdict's method, and the best peer's.
    fn rust_and_best_peer(&self) -> Option<(f64, f64)> {
        let rust = self.rust_in_rotation().or(self.rust_x_copy())?;
        Some((rust, self.best_peer.as_ref()?.1))
    }
}

#[derive(serde::Deserialize)]
struct LabFile {
    rows: Vec<LabRow>,
}

#[derive(serde::Deserialize)]
struct LabRow {
    op: String,
    rows: u64,
    cols: u64,
    dtype: String,
    implementation: String,
    #[serde(default)]
    schedule: String,
    chosen: bool,
    median_us: f64,
    gbps: f64,
    x_copy: Option<f64>,
}

#[derive(serde::Deserialize)]
struct PeersFile {
    rows: Vec<PeerRow>,
    #[serde(default)]
    config: PeersConfig,
}

/// A field a file lacks takes its default: files from before `--l2` were timed as `dirty` is,
/// and a file without `lab_schedule` timed the lab's chosen kernels.
#[derive(serde::Deserialize)]
#[serde(default)]
struct PeersConfig {
    l2: String,
    lab_schedule: Option<String>,
}

impl Default for PeersConfig {
    fn default() -> Self {
        PeersConfig {
            l2: "dirty".into(),
            lab_schedule: None,
        }
    }
}

#[derive(serde::Deserialize)]
struct PeerRow {
    op: String,
    rows: u64,
    cols: u64,
    dtype: String,
    implementation: String,
    median_us: Option<f64>,
    gbps: Option<f64>,
    x_copy: Option<f64>,
    ok: bool,
    #[serde(default)]
    p10_us: Option<f64>,
    #[serde(default)]
    p90_us: Option<f64>,
}

/// The cases of a lab rows file (the chosen schedules only, or with `schedule` that
/// schedule's rows wherever the bench ran it) and a peers file, in the lab's order.
pub fn build(
    lab_json: &str,
    peers_json: Option<&str>,
    schedule: Option<&str>,
) -> Result<Vec<Case>> {
    let lab: LabFile = serde_json::from_str(lab_json)
        .context("not a `lab bench --kernel rows` record file (rows-<stem>.json)")?;
    let mut cases: Vec<Case> = Vec::new();
    fn at(cases: &mut Vec<Case>, op: &str, rows: u64, cols: u64, dtype: &str) -> usize {
        match cases
            .iter()
            .position(|c| c.op == op && c.rows == rows && c.cols == cols && c.dtype == dtype)
        {
            Some(i) => i,
            None => {
                cases.push(Case {
                    op: op.to_string(),
                    rows,
                    cols,
                    dtype: dtype.to_string(),
                    cells: BTreeMap::new(),
                    best_peer: None,
                    rust_over_best_peer: None,
                    outside_spread: None,
                    peers_l2: None,
                    schedule: None,
                });
                cases.len() - 1
            }
        }
    }
    let taken = |r: &LabRow| schedule.map_or(r.chosen, |s| r.schedule == s);
    for r in lab.rows.iter().filter(|r| taken(r)) {
        let Some(x) = r.x_copy else { continue };
        let i = at(&mut cases, &r.op, r.rows, r.cols, &r.dtype);
        cases[i].schedule = schedule.map(str::to_string);
        cases[i].cells.insert(
            r.implementation.clone(),
            Cell {
                gbps: r.gbps,
                x_copy: x,
                median_us: r.median_us,
                p10_p90_us: None,
            },
        );
    }
    if let Some(peers) = peers_json {
        let peers: PeersFile =
            serde_json::from_str(peers).context("not a `gpu/rows/peers.py` file (peers.json)")?;
        // Its Rust kernels in the rotation must be the table's.
        let timed = peers.config.lab_schedule.as_deref();
        if timed != schedule
            && peers
                .rows
                .iter()
                .any(|r| r.implementation.starts_with("rust-"))
        {
            let what = |s: Option<&str>| s.map_or("the chosen".into(), |s| format!("the {s}"));
            bail!(
                "the peers file timed {} schedule's Rust kernels, the table asks for {}: pass \
                 --schedule as peers.py's --lab-schedule was",
                what(timed),
                what(schedule)
            );
        }
        for r in peers
            .rows
            .iter()
            .filter(|r| r.ok && r.implementation != "copy")
        {
            let (Some(gbps), Some(x), Some(us)) = (r.gbps, r.x_copy, r.median_us) else {
                continue;
            };
            let name = IN_ROTATION
                .iter()
                .find(|(i, _)| *i == r.implementation)
                .map_or(r.implementation.as_str(), |(_, cell)| cell);
            let i = at(&mut cases, &r.op, r.rows, r.cols, &r.dtype);
            cases[i].peers_l2 = Some(peers.config.l2.clone());
            cases[i].cells.insert(
                name.to_string(),
                Cell {
                    gbps,
                    x_copy: x,
                    median_us: us,
                    p10_p90_us: r.p10_us.zip(r.p90_us),
                },
            );
        }
    }
    for c in &mut cases {
        c.best_peer = PEERS
            .iter()
            .filter_map(|p| c.cells.get(*p).map(|cell| (p.to_string(), cell.x_copy)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        c.rust_over_best_peer = c.rust_and_best_peer().map(|(rust, peer)| rust / peer - 1.0);
        c.outside_spread = c.spread();
    }
    if cases.is_empty() {
        match schedule {
            Some(s) => bail!("the rows file holds no verified row of the {s} schedule"),
            None => bail!("the rows file holds no verified row of a chosen schedule"),
        }
    }
    Ok(cases)
}

/// The table as text: one line per case, `GB/s ×copy` per implementation, then the verdicts.
pub fn text(cases: &[Case]) -> String {
    let rotation = cases.iter().any(|c| c.rust_in_rotation().is_some());
    let mut headers: Vec<String> = ["op", "rows x cols", "dtype"].map(String::from).to_vec();
    headers.extend(IMPLEMENTATIONS.iter().map(|i| i.to_string()));
    if rotation {
        headers.push("rust in peers' run".into());
    }
    headers.extend(["best peer", "Rust >= 0.90", "Rust >= best peer"].map(String::from));
    let spread = cases.iter().any(|c| c.outside_spread.is_some());
    if spread {
        headers.push("outside the spread".into());
    }
    let rows: Vec<Vec<String>> = cases
        .iter()
        .map(|c| {
            let mut r = vec![
                c.op.clone(),
                format!("{} x {}", c.rows, c.cols),
                c.dtype.clone(),
            ];
            r.extend(IMPLEMENTATIONS.iter().map(|i| {
                c.cells
                    .get(*i)
                    .map_or("-".into(), |x| format!("{:.0} {:.2}", x.gbps, x.x_copy))
            }));
            if rotation {
                r.push(
                    c.rust_in_rotation()
                        .map_or("-".into(), |x| format!("{x:.2}")),
                );
            }
            r.push(
                c.best_peer
                    .as_ref()
                    .map_or("-".into(), |(p, x)| format!("{x:.2} {p}")),
            );
            let rust = c.rust_x_copy();
            r.push(rust.map_or("-".into(), |x| yes_no(x >= 0.90)));
            r.push(match (c.rust_at_least_best_peer(), c.rust_over_best_peer) {
                (Some(ahead), Some(m)) => format!("{} {:+.1} %", yes_no(ahead), 100.0 * m),
                _ => "-".into(),
            });
            if spread {
                r.push(c.outside_spread.map_or("-", Spread::name).into());
            }
            r
        })
        .collect();
    let held = |f: &dyn Fn(&Case) -> Option<bool>| {
        let v: Vec<bool> = cases.iter().filter_map(f).collect();
        (v.iter().filter(|b| **b).count(), v.len())
    };
    let (roof, n) = held(&|c| c.rust_x_copy().map(|x| x >= 0.90));
    let (peer, m) = held(&Case::rust_at_least_best_peer);
    let widest = cases
        .iter()
        .filter_map(|c| c.rust_over_best_peer.filter(|m| *m < 0.0).map(|m| (m, c)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(String::new(), |(m, c)| {
            format!(
                " (the widest gap behind: {:.1} %, {} {} x {} {})",
                -100.0 * m,
                c.op,
                c.rows,
                c.cols,
                c.dtype
            )
        });
    let count = |s: Spread| cases.iter().filter(|c| c.outside_spread == Some(s)).count();
    let spread_summary = if spread {
        format!(
            "; outside the rounds' spread: behind on {}, ahead on {} (Rust's fastest tenth of \
             rounds slower than the best peer's slowest tenth, or the other way round)",
            count(Spread::Behind),
            count(Spread::Ahead)
        )
    } else {
        String::new()
    };
    let mut method = if rotation {
        "; rust in peers' run: the same kernels and launches timed by the peers' script in its \
         own rotation, x its copy (the slower compiler): the peer verdict is taken by it"
            .to_string()
    } else {
        String::new()
    };
    if cases.iter().any(|c| c.peers_l2.as_deref() == Some("clean")) {
        method += "; the peers timed with the L2 clean at each launch (peers.py --l2 clean)";
    }
    let schedule = cases
        .iter()
        .find_map(|c| c.schedule.as_deref())
        .map_or("the schedule the catalogue chooses".to_string(), |s| {
            format!("the {s} schedule")
        });
    format!(
        "each cell: GB/s (one read and one write of the matrix) and x the D2D copy of the same \
         matrix in its own run; Rust: the slower of the two compilers, {schedule}; Rust >= \
         best peer: the verdict, and by how much Rust's x copy is above (+) or below (-) the \
         best peer's{method}\n{}\nRust at >= 0.90 x copy: {roof} of {n}; at least as fast as \
         the best peer: {peer} of {m}{widest}{spread_summary}\n",
        profiler::table::render_aligned(&headers, &rows, &(3..headers.len()).collect::<Vec<_>>())
    )
}

/// The table in `format`.
pub fn render(cases: &[Case], format: Format) -> Result<String> {
    Ok(match format {
        Format::Table => text(cases),
        Format::Json => {
            serde_json::to_string_pretty(&serde_json::json!({
                "schema_version": 1,
                "tool": "xtask rows-table",
                "cases": cases,
            }))? + "\n"
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record([
                "op",
                "rows",
                "cols",
                "dtype",
                "implementation",
                "gbps",
                "x_copy",
                "median_us",
            ])?;
            for c in cases {
                for (i, cell) in &c.cells {
                    w.write_record([
                        c.op.clone(),
                        c.rows.to_string(),
                        c.cols.to_string(),
                        c.dtype.clone(),
                        i.clone(),
                        format!("{:.1}", cell.gbps),
                        format!("{:.4}", cell.x_copy),
                        format!("{:.2}", cell.median_us),
                    ])?;
                }
            }
            String::from_utf8(w.into_inner()?)?
        }
    })
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "NO" }.into()
}

/// One chart per op and dtype: × copy per shape, a bar per implementation.
pub fn charts(cases: &[Case]) -> Vec<Bars> {
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(127, 127, 127),
        RGBColor(255, 127, 14),
        RGBColor(214, 39, 40),
        RGBColor(140, 86, 75),
    ];
    let mut keys: Vec<(String, String)> = Vec::new();
    for c in cases {
        let k = (c.op.clone(), c.dtype.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(op, dtype)| {
            let mine: Vec<&Case> = cases
                .iter()
                .filter(|c| c.op == op && c.dtype == dtype)
                .collect();
            Bars {
                name: format!("rows-{op}-{dtype}"),
                title: format!("{op} {dtype}: x the D2D copy of the same matrix"),
                subtitle: "one read and one write of the matrix; 1.0 = the copy's bandwidth".into(),
                caption: String::new(),
                groups: mine
                    .iter()
                    .map(|c| format!("{}x{}", c.rows, c.cols))
                    .collect(),
                series: IMPLEMENTATIONS
                    .iter()
                    .zip(colors)
                    .map(|(i, color)| BarSeries {
                        name: i.to_string(),
                        color,
                        values: mine
                            .iter()
                            .map(|c| c.cells.get(*i).map(|x| x.x_copy))
                            .collect(),
                    })
                    .chain([BarSeries {
                        name: "rust in peers' run".into(),
                        color: RGBColor(23, 190, 207),
                        values: mine.iter().map(|c| c.rust_in_rotation()).collect(),
                    }])
                    .filter(|s| s.values.iter().any(Option::is_some))
                    .collect(),
                levels: Vec::new(),
                y_desc: "x copy",
                decimals: 2,
            }
        })
        .collect()
}

/// Draws every chart into `dir` as `rows-<op>-<dtype>.svg`; returns the files.
pub fn plot(cases: &[Case], dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    charts(cases)
        .iter()
        .map(|b| {
            let path = dir.join(format!("{}.svg", b.name));
            files::write_atomic(&path, draw(b)?.svg.as_bytes())?;
            Ok(path)
        })
        .collect()
}

#[cfg(test)]
mod tests;
