//! The headline: the numbers a run is read for, as sentences (the best reduction and
//! `reduce_v6` against CUB and the read ceiling, the padded and best transpose against the
//! copy, Rust against the CUDA C++ twins, the launch gap per kernel, the model's predictions
//! per kernel family), each naming the cache
//! it was measured with: the hot rows' sentences, then the cold rows'.

use super::print::fmt_us;
use super::{Cache, Row, Status};
use catalog::{Backend, Dtype, Family, Runner};
use std::fmt::Write as _;

/// Sizes the headline quotes in a sweep (the performance issue's sizes).
const HEADLINE_SIZES: [u64; 4] = [1 << 20, 1 << 24, 1 << 28, 1 << 30];

/// A median per launch below this times the launch more than the kernel: launch latency on
/// an H200 is about 2–4 µs, so under 10 µs the kernel's own work is not what is measured. The
/// headline compares no group (one size of reductions, one transpose shape) with such a row,
/// nor with a ceiling or reference that is one: the ratios would be ratios of launch costs.
pub const LAUNCH_DOMINATED_US: f64 = 10.0;

/// The headline numbers: the best reduction and v6 against CUB and the read ceiling,
/// the padded and best transpose against the copy, the launch gap per kernel. A group whose
/// launches dominate its times ([`LAUNCH_DOMINATED_US`]) gets one line saying so instead.
pub fn headline(rows: &[Row]) -> Vec<String> {
    let mut caches: Vec<Cache> = rows.iter().map(|r| r.cache).collect();
    caches.sort_unstable();
    caches.dedup();
    caches
        .into_iter()
        .flat_map(|cache| {
            let rows: Vec<Row> = rows.iter().filter(|r| r.cache == cache).cloned().collect();
            headline_of(&rows, cache)
        })
        .collect()
}

/// The headline of `rows`, every one measured with `cache`.
fn headline_of(rows: &[Row], cache: Cache) -> Vec<String> {
    let c = cache.label();
    let ok = |r: &&Row| r.status == Status::Ok && r.gbps.is_some();
    let mut sizes = catalog::records::results::reduce_sizes(rows);
    if sizes.len() > HEADLINE_SIZES.len() {
        sizes.retain(|n| HEADLINE_SIZES.contains(n));
    }
    let ratios = |r: &Row| {
        let mut s = format!("{:.0} GB/s", r.gbps.unwrap_or(0.0));
        if let Some(v) = r.vs_reference {
            let what = if r.section == Family::Reduce {
                "CUB"
            } else {
                "copy"
            };
            let _ = write!(s, " = {v:.3} x {what}");
        }
        if let Some(p) = r.pct_of_ceiling {
            let _ = write!(s, ", {p:.1}% of the {}", ceiling_name(r.section));
        }
        s
    };
    let mut out = Vec::new();
    let mut groups: Vec<(Dtype, String)> = rows
        .iter()
        .filter(|r| r.section == Family::Reduce && sizes.contains(&r.n))
        .map(|r| (r.dtype, r.size.clone()))
        .collect();
    groups.dedup();
    for (dtype, size) in groups {
        let in_group = |r: &&Row| r.section == Family::Reduce && r.dtype == dtype && r.size == size;
        let group: Vec<&Row> = rows.iter().filter(in_group).filter(ok).collect();
        if let Some(us) = launch_dominated(&group, rows) {
            out.push(not_compared(
                &format!("reductions {dtype} {size} ({c})"),
                us,
            ));
            continue;
        }
        let ours = rows
            .iter()
            .filter(in_group)
            .filter(ok)
            .filter(|r| r.backend.is_rust());
        if let Some(b) = ours
            .clone()
            .max_by(|a, b| a.gbps.partial_cmp(&b.gbps).unwrap())
        {
            out.push(format!(
                "best reduction {dtype} {size} ({c}): {} [{}] {}",
                b.kernel,
                b.backend,
                ratios(b)
            ));
        }
        for r in ours.filter(|r| r.kernel == "reduce_v6") {
            out.push(format!(
                "reduce_v6 [{}] {dtype} {size} ({c}): {}",
                r.backend,
                ratios(r)
            ));
        }
        for r in rows
            .iter()
            .filter(in_group)
            .filter(ok)
            .filter(|r| r.backend == Runner::Cub)
        {
            out.push(format!("{} {dtype} {size} ({c}): {}", r.kernel, ratios(r)));
        }
        out.extend(rust_vs_cpp(&group, &format!("{dtype} {size} ({c})")));
    }
    let mut shapes: Vec<&str> = rows
        .iter()
        .filter(|r| r.section == Family::Transpose && r.backend != Runner::Driver)
        .map(|r| r.size.as_str())
        .collect();
    shapes.dedup();
    for shape in shapes {
        let group: Vec<&Row> = rows
            .iter()
            .filter(|r| r.section == Family::Transpose && r.size == shape)
            .filter(ok)
            .collect();
        if let Some(us) = launch_dominated(&group, rows) {
            out.push(not_compared(&format!("transposes at {shape} ({c})"), us));
            continue;
        }
        let ours = rows
            .iter()
            .filter(|r| r.section == Family::Transpose && r.size == shape && r.backend.is_rust())
            .filter(|r| r.kernel.starts_with("transpose"))
            .filter(ok);
        if let Some(b) = ours
            .clone()
            .max_by(|a, b| a.gbps.partial_cmp(&b.gbps).unwrap())
        {
            out.push(format!(
                "best transpose {shape} ({c}): {} [{}] {}",
                b.kernel,
                b.backend,
                ratios(b)
            ));
        }
        for r in ours.filter(|r| r.kernel == "transpose_padded") {
            out.push(format!(
                "transpose_padded [{}] {shape} ({c}): {}",
                r.backend,
                ratios(r)
            ));
        }
        out.extend(rust_vs_cpp(&group, &format!("{shape} ({c})")));
    }
    let mut backends: Vec<Runner> = rows
        .iter()
        .filter(|r| r.section == Family::LaunchGap)
        .map(|r| r.backend)
        .collect();
    backends.dedup();
    for b in backends {
        let us = |k: &str| {
            rows.iter()
                .find(|r| r.section == Family::LaunchGap && r.backend == b && r.kernel == k)
                .filter(|r| r.status == Status::Ok)
                .and_then(|r| r.us_per_launch)
                .map_or("-".to_string(), |u| format!("{u:.2}"))
        };
        out.push(format!(
            "launch gap [{b}] ({c}), us per kernel: A sync after each {}, B back-to-back {}, C graph {} (capture + instantiate once: {} us)",
            us("bump_sync_each"),
            us("bump_back_to_back"),
            us("bump_graph"),
            us("bump_graph_capture"),
        ));
    }
    out.extend(fault_lines(rows, &c));
    out.extend(super::rows::headline_lines(rows, cache));
    out.extend(super::rows::copy_spread_line(rows, cache));
    out.extend(super::model::headline_lines(rows, cache));
    out
}

/// One line per fault kernel whose twin was measured too: its median against the twin's
/// (the time the fix saves, or for the memory-bound control the fused pass's gain).
fn fault_lines(rows: &[Row], c: &str) -> Vec<String> {
    let ok = |r: &&Row| r.status == Status::Ok && r.median_us.is_some();
    let mut out = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.section == Family::Faults)
        .filter(ok)
    {
        let Some(f) = catalog::kernels::find(&r.kernel).and_then(|k| k.fault) else {
            continue;
        };
        if f.fixed {
            continue;
        }
        let twin = rows
            .iter()
            .filter(ok)
            .find(|t| t.kernel == f.twin && t.backend == r.backend && t.size == r.size);
        if let (Some(t), Some(us)) = (twin, r.median_us) {
            let fixed = t.median_us.unwrap_or(f64::NAN);
            out.push(format!(
                "{} [{}] {} ({c}): {} us against {}'s {} us ({:.2} x); expected verdict {}",
                r.kernel,
                r.backend,
                r.size,
                fmt_us(us),
                t.kernel,
                fmt_us(fixed),
                us / fixed,
                f.verdict
            ));
        }
    }
    out
}

/// The fastest median per launch among `group` and the rows it is compared with (its
/// ceilings and references), when that is under [`LAUNCH_DOMINATED_US`]: then the group is
/// not compared.
fn launch_dominated(group: &[&Row], rows: &[Row]) -> Option<f64> {
    let named: Vec<&String> = group
        .iter()
        .flat_map(|r| r.ceiling.iter().chain(&r.reference))
        .collect();
    let compared_with = rows.iter().filter(|r| named.contains(&&r.target()));
    group
        .iter()
        .copied()
        .chain(compared_with)
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| r.us_per_launch)
        .min_by(f64::total_cmp)
        .filter(|&us| us < LAUNCH_DOMINATED_US)
}

/// The headline's line for a launch-dominated group.
fn not_compared(what: &str, fastest_us: f64) -> String {
    format!(
        "{what}: launch-dominated (fastest median {} us < {LAUNCH_DOMINATED_US:.0} us), not compared",
        fmt_us(fastest_us)
    )
}

/// "Rust / C++" for one group of rows (one dtype and size, or one transpose shape): each
/// kernel's Rust rows as a ratio of its nvcc row's bandwidth (> 1: Rust is faster). None
/// without nvcc rows.
fn rust_vs_cpp(group: &[&Row], what: &str) -> Option<String> {
    let mut cells = Vec::new();
    for cpp in group.iter().filter(|r| r.backend == Backend::Nvcc) {
        let ratios: Vec<String> = group
            .iter()
            .filter(|r| r.kernel == cpp.kernel && r.backend.is_rust())
            .filter_map(|r| Some(format!("{} {:.3}", r.backend, r.gbps? / cpp.gbps?)))
            .collect();
        if !ratios.is_empty() {
            cells.push(format!("{} {}", cpp.kernel, ratios.join(" ")));
        }
    }
    (!cells.is_empty()).then(|| format!("Rust / C++ (nvcc) {what}: {}", cells.join("; ")))
}

fn ceiling_name(s: Family) -> &'static str {
    match s {
        Family::Reduce => "read ceiling",
        _ => "copy ceiling",
    }
}
