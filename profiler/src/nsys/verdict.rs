//! The nsys seed's first question, "is the time even inside a kernel?", answered per NVTX
//! range and for the whole run: wall time, GPU-busy time, the gaps between GPU operations,
//! and one line of diagnosis.
//!
//! A range's wall time is its own start and end on the CPU (`nvtx_pushpop_trace`). Its
//! GPU-busy time is the union of every kernel, memcpy and memset interval of
//! `cuda_gpu_trace`, clipped to that window: the question is whether the GPU was working
//! *while the range ran*. nsys's `nvtx_gpu_proj_trace` answers another one: it charges each
//! GPU operation to the range whose thread issued it and reports the span from the first such
//! operation to the last, a span, not busy time (on the H200 capture, `bump_sync_each [llvm]
//! … timed` projects to 201.4 ms of span over 20,020 operations that keep the GPU busy for
//! 17.8 ms of it). The lab synchronizes before every range ends, so little GPU work spills
//! past a range's window.
//!
//! A gap is the idle time between two consecutive busy stretches inside the window (the idle
//! time before the first and after the last operation is not a gap between kernels). The
//! thresholds are the constants below, printed with the table ([`rules_text`]).

use crate::nsys::csv::{ApiCall, GpuOp, NvtxRange};
use std::collections::{HashMap, HashSet};

/// Kernel-bound when GPU work covers at least this share of the range's wall time: then
/// removing every idle moment could not make the range even 1.33× faster, and the kernels
/// are the larger lever.
pub const KERNEL_BOUND_BUSY: f64 = 0.75;

/// A gap of at most this many ns between two GPU operations is dispatch: launch and
/// synchronize round trips cost 3-10 µs each on the H200 (the launch-gap demo's medians), so
/// this leaves room for a few API calls and a little host code between launches; longer idle
/// stretches are the host doing other work.
pub const DISPATCH_GAP_NS: u64 = 100_000;

/// Dispatch-bound (rather than host-bound) when dispatch gaps hold at least this share of the
/// range's idle time.
pub const DISPATCH_SHARE: f64 = 0.5;

/// The whole run's row name.
pub const WHOLE_RUN: &str = "(whole run)";

/// The diagnosis of one range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// GPU work fills the range and a kernel is the largest part of it: profile it with ncu.
    KernelBound,
    /// As kernel-bound, but copies or memsets are the largest part: not a kernel problem.
    CopyBound,
    /// The GPU idles in short gaps between operations: launch and synchronize overhead.
    DispatchBound,
    /// The GPU idles in long stretches (or has no work at all) while the CPU works.
    HostBound,
    /// The trace lacks GPU work the range launched (graphs traced as a whole).
    Unknown,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::KernelBound => "kernel-bound",
            Kind::CopyBound => "copy-bound",
            Kind::DispatchBound => "dispatch-bound",
            Kind::HostBound => "host-bound",
            Kind::Unknown => "unknown",
        }
    }
}

/// One range's numbers and verdict.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RangeVerdict {
    pub range: String,
    /// Nesting depth (the whole run and top-level ranges: 0).
    pub level: u32,
    pub start_ns: u64,
    pub wall_ns: u64,
    /// Union of the GPU operations' intervals inside the range.
    pub busy_ns: u64,
    /// GPU operations (kernels, memcpys, memsets) overlapping the range.
    pub ops: usize,
    /// Gaps between consecutive busy stretches inside the range.
    pub gaps: usize,
    pub median_gap_ns: Option<f64>,
    pub max_gap_ns: Option<u64>,
    /// The gaps of at most [`DISPATCH_GAP_NS`], added up.
    pub dispatch_gap_ns: u64,
    /// GPU time inside the range in kernels, and in memcpys and memsets (overlaps counted
    /// twice: these weigh the two kinds, the union is `busy_ns`).
    pub kernel_ns: u64,
    pub copy_ns: u64,
    /// Of the kind with more time (kernels on a tie), the operation with the largest GPU time
    /// in the range, and its time there. "In the range" is the work its own API calls
    /// launched where it launched any (an asynchronous program's range launches kernels that
    /// run after it, while earlier work fills the GPU), else the work that ran inside it; the
    /// time is what ran inside it, or (launched work that ran later) its share of the
    /// launched work applied to the busy time.
    pub top: Option<(String, u64)>,
    /// Graph launches in the range whose GPU work is not in the trace.
    pub untraced_graph_launches: usize,
    pub kind: Kind,
    /// The one line of diagnosis.
    pub diagnosis: String,
}

impl RangeVerdict {
    pub fn busy_share(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.busy_ns as f64 / self.wall_ns as f64
        }
    }

    /// The dispatch gaps' share of the wall time.
    pub fn dispatch_share(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.dispatch_gap_ns as f64 / self.wall_ns as f64
        }
    }
}

/// The three traces, indexed for per-range queries.
pub struct Timeline {
    ranges: Vec<NvtxRange>,
    /// Sorted by start.
    ops: Vec<GpuOp>,
    names: Vec<String>,
    /// `reach[i]`: the latest end among `ops[..=i]`, to find operations that began before a
    /// range and still run inside it.
    reach: Vec<u64>,
    calls: Vec<ApiCall>,
    /// Correlation ids of the API calls that are not graph launches: a GPU operation whose id
    /// is not among them came from a graph.
    direct: HashSet<u64>,
    /// The operations each API call issued (a graph launch: several), by correlation id.
    issued: HashMap<u64, Vec<usize>>,
}

impl Timeline {
    /// `ops` sorted by start, as [`crate::nsys::csv::parse_gpu_trace`] returns them.
    pub fn new(
        mut ranges: Vec<NvtxRange>,
        ops: Vec<GpuOp>,
        names: Vec<String>,
        mut calls: Vec<ApiCall>,
    ) -> Timeline {
        ranges.sort_by_key(|r| (r.start, r.level));
        calls.sort_by_key(|c| c.start);
        let reach = ops
            .iter()
            .scan(0u64, |m, o| {
                *m = (*m).max(o.end);
                Some(*m)
            })
            .collect();
        let direct = calls
            .iter()
            .filter(|c| !c.graph_launch)
            .map(|c| c.corr)
            .collect();
        let mut issued: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, o) in ops.iter().enumerate() {
            issued.entry(o.corr).or_default().push(i);
        }
        Timeline {
            ranges,
            ops,
            names,
            reach,
            calls,
            direct,
            issued,
        }
    }

    /// The whole run (from the first event of any kind to the last), then every range in
    /// order of start.
    pub fn verdicts(&self) -> Vec<RangeVerdict> {
        let starts = self
            .ranges
            .iter()
            .map(|r| r.start)
            .chain(self.ops.iter().map(|o| o.start))
            .chain(self.calls.iter().map(|c| c.start));
        let ends = self
            .ranges
            .iter()
            .map(|r| r.end)
            .chain(self.reach.last().copied())
            .chain(self.calls.iter().map(|c| c.end));
        let (Some(first), Some(last)) = (starts.min(), ends.max()) else {
            return Vec::new();
        };
        let mut out = vec![self.analyse(WHOLE_RUN, 0, first, last, None)];
        for r in &self.ranges {
            out.push(self.analyse(&r.name, r.level, r.start, r.end, Some(r.tid)));
        }
        out
    }

    /// One window `[a, b)`; graph launches counted on thread `tid` (any thread: `None`).
    pub fn analyse(
        &self,
        name: &str,
        level: u32,
        a: u64,
        b: u64,
        tid: Option<u64>,
    ) -> RangeVerdict {
        // Operations overlapping [a, b): those starting before b, less those that ended by a.
        let hi = self.ops.partition_point(|o| o.start < b);
        let mut lo = self.ops.partition_point(|o| o.start < a);
        while lo > 0 && self.reach[lo - 1] > a {
            lo -= 1;
        }
        let mut busy = 0u64;
        let mut gaps: Vec<u64> = Vec::new();
        let mut stretch: Option<(u64, u64)> = None;
        let mut time_by_name: Vec<(usize, u64)> = Vec::new();
        let mut ops = 0usize;
        let mut from_graphs = 0usize;
        for o in &self.ops[lo..hi] {
            let (s, e) = (o.start.max(a), o.end.min(b));
            if e <= s {
                continue;
            }
            ops += 1;
            if !self.direct.contains(&o.corr) {
                from_graphs += 1;
            }
            add_time(&mut time_by_name, o.name, e - s);
            stretch = match stretch {
                None => Some((s, e)),
                Some((s0, e0)) if s > e0 => {
                    busy += e0 - s0;
                    gaps.push(s - e0);
                    Some((s, e))
                }
                Some((s0, e0)) => Some((s0, e0.max(e))),
            };
        }
        if let Some((s0, e0)) = stretch {
            busy += e0 - s0;
        }
        let calls = {
            let lo = self.calls.partition_point(|c| c.start < a);
            let hi = self.calls.partition_point(|c| c.start < b);
            &self.calls[lo..hi]
        };
        let own = || calls.iter().filter(|c| tid.is_none_or(|t| t == c.tid));
        let graph_launches = own().filter(|c| c.graph_launch).count();
        // The work the range's own calls launched, whenever it ran.
        let mut launched: Vec<(usize, u64)> = Vec::new();
        for o in own()
            .filter_map(|c| self.issued.get(&c.corr))
            .flatten()
            .map(|&i| &self.ops[i])
        {
            add_time(&mut launched, o.name, o.end - o.start);
        }
        // nsys traces a graph either node by node (`--cuda-graph-trace=node`: its kernels are
        // in cuda_gpu_trace) or as a whole (its work is in none of these reports). Graph
        // launches and no operation from a graph: the range's GPU work is not all here.
        let untraced = if graph_launches > 0 && from_graphs == 0 {
            graph_launches
        } else {
            0
        };
        let wall = b.saturating_sub(a);
        let dispatch: u64 = gaps.iter().filter(|&&g| g <= DISPATCH_GAP_NS).sum();
        let is_copy = |n: usize| self.names[n].starts_with('[');
        let total = |copies: bool| -> u64 {
            time_by_name
                .iter()
                .filter(|(n, _)| is_copy(*n) == copies)
                .map(|(_, t)| t)
                .sum()
        };
        let (kernel_ns, copy_ns) = (total(false), total(true));
        let copies = copy_ns > kernel_ns;
        let of_kind = |v: &[(usize, u64)]| -> Vec<(usize, u64)> {
            v.iter()
                .copied()
                .filter(|(n, _)| is_copy(*n) == copies)
                .collect()
        };
        let (launched, ran) = (of_kind(&launched), of_kind(&time_by_name));
        let top = if launched.is_empty() {
            ran.iter()
                .max_by_key(|(_, t)| *t)
                .map(|&(n, t)| (self.names[n].clone(), t))
        } else {
            // Its time inside the range where it ran there, else its share of the launched
            // work applied to the busy time.
            let all: u64 = launched.iter().map(|(_, t)| t).sum();
            launched.iter().max_by_key(|(_, t)| *t).map(|&(n, t)| {
                let inside = ran.iter().find(|(m, _)| *m == n).map(|(_, t)| *t);
                let share = t as f64 / all.max(1) as f64;
                let t = inside.unwrap_or((share * busy as f64).round() as u64);
                (self.names[n].clone(), t)
            })
        };
        let mut sorted = gaps.clone();
        sorted.sort_unstable();
        let median = match sorted.len() {
            0 => None,
            n if n % 2 == 1 => Some(sorted[n / 2] as f64),
            n => Some((sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0),
        };
        let mut v = RangeVerdict {
            range: name.to_string(),
            level,
            start_ns: a,
            wall_ns: wall,
            busy_ns: busy,
            ops,
            gaps: gaps.len(),
            median_gap_ns: median,
            max_gap_ns: sorted.last().copied(),
            dispatch_gap_ns: dispatch,
            kernel_ns,
            copy_ns,
            top,
            untraced_graph_launches: untraced,
            kind: Kind::Unknown,
            diagnosis: String::new(),
        };
        let (kind, diagnosis) = diagnose(&v);
        v.kind = kind;
        v.diagnosis = diagnosis;
        v
    }
}

/// Adds `ns` to `name`'s total in `times` (names in first-appearance order).
fn add_time(times: &mut Vec<(usize, u64)>, name: usize, ns: u64) {
    match times.iter_mut().find(|(n, _)| *n == name) {
        Some((_, t)) => *t += ns,
        None => times.push((name, ns)),
    }
}

/// The verdict of one range's numbers (the rules of [`rules_text`]).
pub fn diagnose(v: &RangeVerdict) -> (Kind, String) {
    let pct = |x: f64| format!("{:.0} %", 100.0 * x);
    if v.untraced_graph_launches > 0 {
        return (
            Kind::Unknown,
            format!(
                "unknown: {} graph launch{} not in the trace (trace with \
                 --cuda-graph-trace=node)",
                v.untraced_graph_launches,
                if v.untraced_graph_launches == 1 {
                    ""
                } else {
                    "es"
                }
            ),
        );
    }
    if v.ops == 0 {
        return (
            Kind::HostBound,
            "host-bound: no GPU work (the CPU's alone)".into(),
        );
    }
    let busy = v.busy_share();
    if busy >= KERNEL_BOUND_BUSY {
        let (name, t) = v.top.clone().unwrap_or_default();
        let share = if v.busy_ns == 0 {
            0.0
        } else {
            (t as f64 / v.busy_ns as f64).min(1.0)
        };
        return if v.copy_ns > v.kernel_ns {
            (
                Kind::CopyBound,
                format!(
                    "copy-bound: {name} ({} of GPU time), a copy: fewer or larger \
                     transfers, not ncu",
                    pct(share)
                ),
            )
        } else {
            (
                Kind::KernelBound,
                format!(
                    "kernel-bound → ncu on {} ({} of GPU time)",
                    crate::names::function(&name),
                    pct(share)
                ),
            )
        };
    }
    let idle = v.wall_ns.saturating_sub(v.busy_ns);
    if idle > 0 && v.dispatch_gap_ns as f64 >= DISPATCH_SHARE * idle as f64 {
        (
            Kind::DispatchBound,
            format!(
                "dispatch-bound: gaps between GPU ops are {} of the wall → graphs, fewer \
                 launches, fusion",
                pct(v.dispatch_share())
            ),
        )
    } else {
        let host = idle.saturating_sub(v.dispatch_gap_ns) as f64 / v.wall_ns.max(1) as f64;
        (
            Kind::HostBound,
            format!(
                "host-bound: the GPU waits on the CPU {} of the wall",
                pct(host)
            ),
        )
    }
}

/// The rules, with the thresholds, as printed under the table.
pub fn rules_text() -> String {
    format!(
        "Verdicts, first that applies: unknown when the range launched CUDA graphs and the trace \
         has none of their work;\n\
         host-bound when it has no GPU work; kernel-bound when GPU work (kernels, copies, \
         memsets; their union)\n\
         covers ≥ {busy:.0} % of the range's wall time (ncu on the kernel with the largest GPU \
         time in it; copy-bound\n\
         when memcpys and memsets take more GPU time than kernels); dispatch-bound when gaps of \
         ≤ {gap} µs between\n\
         consecutive GPU operations hold ≥ {share:.0} % of the idle time (CUDA graphs, fewer \
         launches, fusion); otherwise\n\
         host-bound (the GPU waits on the CPU in longer stretches, or before the first and \
         after the last operation).\n\
         A range is timed on the CPU from push to pop; GPU work is clipped to it, and the \
         kernel named is the one the range's own calls launched the most GPU time of.\n",
        busy = 100.0 * KERNEL_BOUND_BUSY,
        gap = DISPATCH_GAP_NS / 1000,
        share = 100.0 * DISPATCH_SHARE,
    )
}

/// The table: one row per range (nested ranges indented), the diagnosis last.
pub fn render(verdicts: &[RangeVerdict]) -> String {
    let headers: Vec<String> = [
        "range",
        "wall ms",
        "GPU busy ms",
        "busy %",
        "GPU ops",
        "median gap µs",
        "max gap µs",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    let us = |ns: f64| format!("{:.2}", ns / 1e3);
    let rows: Vec<Vec<String>> = verdicts
        .iter()
        .map(|v| {
            vec![
                format!("{}{}", "  ".repeat(v.level as usize), v.range),
                ms(v.wall_ns),
                ms(v.busy_ns),
                format!("{:.1}", 100.0 * v.busy_share()),
                v.ops.to_string(),
                v.median_gap_ns.map_or("-".into(), us),
                v.max_gap_ns.map_or("-".into(), |g| us(g as f64)),
            ]
        })
        .collect();
    let table = crate::table::render(&headers, &rows);
    let mut out = String::new();
    for (i, line) in table.lines().enumerate() {
        // The header, render_table's rule under it, then one line per verdict.
        let last = match i {
            0 => "verdict".to_string(),
            1 => "-".repeat(7),
            _ => verdicts[i - 2].diagnosis.clone(),
        };
        out += &format!("{line}  {last}\n");
    }
    out
}
