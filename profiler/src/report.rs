//! One kernel's profile as text: the verdict first, then the numbers behind it (Speed of
//! Light, occupancy, launch, stalls, memory), then every finding ranked by what it costs.

use crate::diagnose::{Diagnosis, Finding, Kind, MIN_COST};
use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// The kernel's profile under `title` (`reduce_v3 [llvm]`, or a kernel's short name); `launch`
/// names its grid, block and registers.
pub fn kernel_text(title: &str, launch: &str, c: &dyn Counters, d: &Diagnosis) -> String {
    let num = |name: &str| c.m(name);
    let show = |x: Option<f64>| x.map_or("n/a".into(), fmt::value);
    let pct = |x: Option<f64>| x.map_or("n/a".into(), fmt::pct);
    let mut out = format!("== {title}  ({launch})\n");
    out += &format!("  Verdict          {}\n", d.headline);
    out += &format!(
        "  Speed of Light   compute (SM) {}  memory {}  DRAM {}  L1 {}  L2 {}\n",
        pct(num(m::SM_PCT)),
        pct(num(m::MEM_PCT)),
        pct(num(m::DRAM_PCT)),
        pct(num(m::L1_PCT)),
        pct(num(m::L2_PCT))
    );
    let pipes: Vec<String> = m::PIPES
        .iter()
        .filter_map(|(name, metric)| Some((*name, num(metric)?)))
        .filter(|(_, p)| *p >= 1.0)
        .map(|(name, p)| format!("{} {}", name.split(' ').next().unwrap_or(name), fmt::pct(p)))
        .collect();
    if !pipes.is_empty() {
        out += &format!("  Pipes            {}\n", pipes.join("  "));
    }
    let limits: Vec<(&str, f64)> = m::OCC_LIMITS
        .iter()
        .filter_map(|(w, n)| Some((*w, num(n)?)))
        .collect();
    let limiter = limits
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or("n/a".to_string(), |(w, n)| {
            format!("{w} ({} blocks/SM)", fmt::value(*n))
        });
    out += &format!(
        "  Occupancy        achieved {} of theoretical {}; limiter: {}\n",
        pct(num(m::ACHIEVED_OCC)),
        pct(num(m::THEORETICAL_OCC)),
        limiter
    );
    // A cluster launch: its clusters' size and how many the GPU holds at once (what caps
    // its waves besides each SM's resources).
    let clusters = match (num(m::CLUSTER_SIZE), num(m::CLUSTER_MAX_ACTIVE)) {
        (Some(size), Some(fit)) if size > 1.0 => format!(
            ", clusters of {} ({} fit at once)",
            fmt::value(size),
            fmt::value(fit)
        ),
        _ => String::new(),
    };
    out += &format!(
        "  Launch           {} blocks, {} waves per SM, {} SMs{clusters}\n",
        show(c.blocks()),
        show(num(m::WAVES)),
        show(num(m::SM_COUNT))
    );
    let stalls: Vec<String> = c
        .stalls()
        .iter()
        .filter(|(s, v)| *s != "selected" && *v > 0.0)
        .take(4)
        .map(|(s, v)| format!("{s} {v:.2}"))
        .collect();
    out += &format!(
        "  Warp stalls      {} (warps stalled per issued instruction)\n",
        if stalls.is_empty() {
            "n/a".into()
        } else {
            stalls.join(", ")
        }
    );
    out += &format!(
        "  Global memory    loads {} sectors/request ({} of 32 B used per sector), stores {} sectors/request ({} B used)\n",
        show(c.ratio(m::GLD_SECTORS, m::GLD_REQ)),
        show(num(m::GLD_BYTES_PER_SECTOR)),
        show(c.ratio(m::GST_SECTORS, m::GST_REQ)),
        show(num(m::GST_BYTES_PER_SECTOR))
    );
    out += &format!(
        "  Shared memory    loads {} requests, {} wavefronts/request, {} conflicts; stores {} requests, {} wavefronts/request, {} conflicts\n",
        show(num(m::SH_LD_REQ)),
        show(c.ratio(m::SH_LD_WAVEFRONTS, m::SH_LD_REQ)),
        show(num(m::SH_LD_CONFLICTS)),
        show(num(m::SH_ST_REQ)),
        show(c.ratio(m::SH_ST_WAVEFRONTS, m::SH_ST_REQ)),
        show(num(m::SH_ST_CONFLICTS))
    );
    let local = num(m::LOCAL_LD_BYTES).map(|ld| ld + num(m::LOCAL_ST_BYTES).unwrap_or(0.0));
    out += &format!("  Local memory     {} bytes (spills)\n", show(local));
    out += &format!(
        "  Time under ncu   {} µs (replayed with clock/cache control: compare kernels, not a speed)\n",
        num(m::DURATION).map_or("n/a".into(), |ns| format!("{:.1}", ns / 1e3))
    );
    out += &findings_text(d);
    out
}

/// The findings, costliest first, then the negligible and the silent rules.
pub fn findings_text(d: &Diagnosis) -> String {
    let mut out = String::from(
        "  Findings         costliest first (each fault's estimated share of the kernel's time)\n",
    );
    for f in &d.findings {
        out += &finding_text(f);
    }
    if !d.negligible.is_empty() {
        let list: Vec<String> = d
            .negligible
            .iter()
            .map(|f| {
                format!(
                    "{} ({})",
                    f.rule,
                    fmt::share(f.weight.or(f.cost).unwrap_or(0.0))
                )
            })
            .collect();
        out += &format!(
            "  Negligible       under {} of the time left to them: {}\n",
            fmt::share(MIN_COST),
            list.join(", ")
        );
    }
    if !d.silent.is_empty() {
        let list: Vec<String> = d
            .silent
            .iter()
            .map(|s| format!("{} (lacks {})", s.rule, s.missing))
            .collect();
        out += &format!(
            "  Not judged       metrics not collected: {} (profile with --set full and the \
             lab's metrics: `cargo xtask profile -- PROGRAM`)\n",
            list.join(", ")
        );
    }
    out
}

fn finding_text(f: &Finding) -> String {
    let cost = match (f.kind, f.weight.or(f.cost)) {
        (Kind::Fault, Some(w)) => format!("{:>4} ", fmt::share(w)),
        (Kind::Bound, _) => "bound ".into(),
        (Kind::Note, _) => "note ".into(),
        _ => String::new(),
    };
    let mut out = format!(
        "    [{}] {cost}{}\n        {}\n",
        f.rule, f.verdict, f.evidence
    );
    if let Some(at) = &f.at {
        out += &format!("        at: {at}\n");
    }
    if !f.fix.is_empty() {
        out += &format!("        fix: {}\n", f.fix);
    }
    out
}
