//! The diagnosis: what binds a kernel, what each fault costs, and one headline.
//!
//! The microscope's reading order, as rules. First the regime ([`bound`]: the busiest of the
//! units, [`units`]), then the faults. Each fault rule measures a quantity against the least
//! the kernel could do with (bytes each memory level moved against the bytes asked for, FFMA
//! against a tensor core's instructions per FLOP, atomics per address, warps resident against
//! the slots) and costs the excess where it binds: where a unit paces the kernel, the time
//! saved if the excess left that unit, until the next busiest binds ([`units::saving`]);
//! where none paces it, the idle issue slots the fault's stalls account for.
//!
//! - memory ([`memory`]): bytes beyond the minimum (coalescing), bank conflicts, local memory
//!   (spills), an L2-resident working set, asynchronous copies with too few stages;
//! - compute ([`compute`]): a matrix product on the FMA pipe instead of the tensor cores,
//!   special-function math saturating the XU pipe, idle lanes (divergence);
//! - atomics ([`atomics`]): chains of updates to one address in the L2, fences, atomics in
//!   shared memory;
//! - latency ([`latency`]): occupancy, barriers, memory latency not hidden, a partial last wave
//!   or a grid too small for the GPU.
//!
//! Ranking: the faults, costliest first, causes before the symptoms they inflate
//! ([`CAUSES`]), each weighed within what the ones above it leave (a kernel that one fault
//! binds to 95 % has 5 % left for any other). A fault that costs less than [`MIN_COST`] is no
//! alarm: it is listed as negligible, never in the headline. The headline names the bound and
//! the first fault, or says the kernel is healthy where none remains, naming any rule that
//! could not run and the metric it lacks.

mod atomics;
mod bound;
mod chain;
mod compute;
mod latency;
mod memory;
pub mod units;

pub use chain::chain as atomic_chain;
pub use latency::stall_meaning;

use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// "High" in the SOL triage: ≥ 70 % of peak (the seeds' threshold).
pub const HIGH_PCT: f64 = 70.0;
/// Memory-bound in DRAM when DRAM throughput is at least this share of the memory SOL.
pub const DRAM_SHARE: f64 = 0.8;
/// A fault that costs less than this share of the kernel's time is no alarm.
pub const MIN_COST: f64 = 0.10;
/// Causes and the symptoms they inflate: where a cause costs enough to count, it is fixed
/// first and its symptoms rank after it, whatever the estimates say. Too few warps leave
/// memory latency unhidden; idle lanes multiply the special-function issue; atomics and bank
/// conflicts make warps wait at the barriers after them, and a compare-and-swap loop idles the
/// lanes that already won.
const CAUSES: [(&str, &str); 8] = [
    ("occupancy", "latency"),
    ("tail", "latency"),
    ("undersized-grid", "latency"),
    ("spills", "latency"),
    ("divergence", "sfu"),
    ("atomics", "barrier"),
    ("atomics", "divergence"),
    ("bank-conflicts", "barrier"),
];

/// What a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// What the kernel is busy with (the regime): explains, costs nothing by itself.
    Bound,
    /// Something that costs time, with an estimate of how much.
    Fault,
    /// A caveat about what the numbers mean (an L2-resident working set): it can head a
    /// diagnosis without a fault, never outrank one.
    Note,
    /// Context that explains the faults (the dominant stall).
    Context,
}

/// What a rule found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Finding {
    /// The rule's id: `regime`, `coalescing`, …
    pub rule: &'static str,
    pub kind: Kind,
    /// One line: `uncoalesced global access`.
    pub verdict: String,
    /// The numbers behind it.
    pub evidence: String,
    /// Which way the fix goes.
    pub fix: String,
    /// The rule's estimate of the share of the kernel's time this accounts for (0–1), alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// That estimate weighed within what the costlier faults leave: what ranks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Where in the source (or the SASS) it happens, from ncu's Source page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// A kernel's diagnosis.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Diagnosis {
    /// What binds the kernel and the first thing to fix, with the numbers.
    pub headline: String,
    /// The rule the headline names (a fault, or a note), or None for a healthy kernel.
    pub verdict: Option<&'static str>,
    /// The regime, then the faults and notes by weight, then the context.
    pub findings: Vec<Finding>,
    /// Faults that fired but cost less than [`MIN_COST`] of the time left to them.
    pub negligible: Vec<Finding>,
    /// Rules that could not judge, each with a metric it lacked.
    pub silent: Vec<Silent>,
}

impl Diagnosis {
    /// Every finding, negligible ones included, for locating them in the source.
    pub fn all_mut(&mut self) -> impl Iterator<Item = &mut Finding> {
        self.findings.iter_mut().chain(self.negligible.iter_mut())
    }

    /// Whether `rule` could not judge (a metric it needs is missing).
    pub fn is_silent(&self, rule: &str) -> bool {
        self.silent.iter().any(|s| s.rule == rule)
    }

    /// The finding of `rule`, if it fired (negligible or not).
    pub fn get(&self, rule: &str) -> Option<&Finding> {
        self.findings
            .iter()
            .chain(&self.negligible)
            .find(|f| f.rule == rule)
    }
}

/// A rule that could not judge, and a metric it needed that the report lacks.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Silent {
    pub rule: &'static str,
    pub missing: &'static str,
}

/// A rule's result before the table adds its id and default fix.
struct Verdict {
    kind: Kind,
    verdict: String,
    evidence: String,
    /// Replaces the rule's own fix where the case needs a different one.
    fix: Option<String>,
    cost: Option<f64>,
}

impl Verdict {
    fn fault(verdict: String, evidence: String, cost: f64) -> Verdict {
        Verdict {
            kind: Kind::Fault,
            verdict,
            evidence,
            fix: None,
            cost: Some(cost.clamp(0.0, 1.0)),
        }
    }

    fn with_fix(mut self, fix: impl Into<String>) -> Verdict {
        self.fix = Some(fix.into());
        self
    }
}

/// What a rule returns: a verdict, nothing to say, or that an input (this metric) is missing.
enum Outcome {
    Found(Verdict),
    Clean,
    Silent(&'static str),
}

impl From<Option<Verdict>> for Outcome {
    fn from(v: Option<Verdict>) -> Outcome {
        v.map_or(Outcome::Clean, Outcome::Found)
    }
}

/// One diagnosis rule.
pub struct Rule {
    pub id: &'static str,
    /// When it fires, with its thresholds.
    pub when: &'static str,
    /// How its cost is estimated.
    pub cost: &'static str,
    /// The fix direction.
    pub fix: &'static str,
    eval: fn(&dyn Counters) -> Outcome,
}

/// Every rule, in the microscope's reading order. Each fault rule names the quantity it
/// measures, the least the kernel could do with, and the unit whose time the excess costs.
pub const RULES: [Rule; 16] = [
    Rule {
        id: "regime",
        when: "always, when SOL was collected: the busiest unit by its busy share (DRAM, L2, \
               L1/shared, the issue slots, each SM pipe), high at >= 70 %: memory-bound (DRAM, \
               or in L2 or L1/shared where those bind and DRAM is below 80 % of them), \
               compute-bound (a math pipe or issue), the roofline crossover (both), or \
               latency-bound (none high); atomic-bound when one address's chain of atomics \
               fills >= 90 % of it",
        cost: "none: it says what is busy, the faults say what is wasted",
        fix: "",
        eval: bound::rule,
    },
    Rule {
        id: "atomics",
        when: "atomics serialise: the L2's atomic requests (`red` and `atom` of every kind) \
               pile onto few slices (the busiest slice's atomic unit >= 8x the average \
               slice's) and their chain runs >= 10 % of the kernel beyond the parallel work; \
               or the warps wait on the fences and the memory queue of atomics that are >= 20 % \
               of the global memory instructions; or shared-memory atomics are >= 30 % of the \
               shared wavefronts",
        cost: "the chain's share of the kernel (the busiest slice's atomic-unit cycles x 3.1 \
               cycles per dependent update of one address, or that unit's busy share where it \
               serves several) beyond the busiest other unit's; the idle issue slots x the \
               fence and queue stalls; or the time saved if the shared atomics left L1/shared \
               (where it binds)",
        fix: "fewer atomics to one address: reduce in registers and shared memory first (one \
              atomic per warp or block), per-block partials summed by a second pass, or \
              privatised copies (one per block) merged at the end",
        eval: atomics::rule,
    },
    Rule {
        id: "tensor-cores",
        when: "a matrix product on the FMA pipe: FFMA >= 25 % of the thread instructions, fed \
               by loads (<= 64 warp FFMA per load) that re-read operands on chip (the L1 and \
               shared memory serve >= 4x the bytes DRAM supplied, or a GEMM's name), the \
               tensor pipe < 5 % busy",
        cost: "the time saved if the product's instruction stream (the FMA and LSU pipes, \
               L1/shared, the issue slots) shrank to 1/7 (a warp MMA does 4,096+ FLOPs to an \
               FFMA's 64; BF16's tensor peak ~15x FP32's FMA peak, TF32 ~7x), where that \
               stream binds; else its busiest unit's share x 6/7",
        fix: "tensor cores: BF16/FP16 inputs (or TF32, e.g. torch.backends.cuda.matmul.allow_tf32), \
              dimensions multiples of 8/16, a library GEMM that picks a tensor-core algorithm; \
              in a hand kernel, mma.sync/wgmma",
        eval: compute::tensor_cores,
    },
    Rule {
        id: "coalescing",
        when: "global accesses move bytes beyond what the threads asked for: loads use < 16 of \
               the 32 bytes of each sector, or the L1, L2 or DRAM moves > 2x the requested \
               bytes (loads through cp.async, TMA or textures are not weighed)",
        cost: "the time saved if each level (L1, L2, DRAM) moved only the requested bytes, \
               where a level binds (partly used sectors the L1 re-serves cost nothing while \
               DRAM paces the kernel); where none binds, the idle issue slots x the memory \
               waits x the wasted share",
        fix: "make a warp's lanes touch consecutive addresses: stage through shared memory \
              (transpose the tile), change the layout, vectorize",
        eval: memory::coalescing,
    },
    Rule {
        id: "bank-conflicts",
        when: "shared-memory requests take > 0.5 extra wavefronts (bank conflicts: passes \
               through the banks beyond the access's minimum) on average",
        cost: "the time saved if the conflicts' wavefronts left L1/shared, where a unit paces \
               the kernel (nothing while DRAM binds); else conflict wavefronts / all shared \
               wavefronts x the shared-memory pipe's busy share",
        fix: "pad the tile (+1 column), swizzle, or address so a warp's active lanes sit on \
              different banks (sequential addressing)",
        eval: memory::bank_conflicts,
    },
    Rule {
        id: "spills",
        when: "any local-memory traffic (register spills, dynamically indexed local arrays)",
        cost: "the larger of: local bytes / (local + global bytes) x the L1's busy share; and, \
               where no unit binds, the idle issue slots x the memory waits x that local share",
        fix: "fewer live values (smaller tiles, less unrolling), indices known at compile time \
              for per-thread arrays, a register budget per thread; look for LDL/STL in the SASS",
        eval: memory::spills,
    },
    Rule {
        id: "sfu",
        when: "the XU pipe (special functions: MUFU sin, cos, ex2, rsqrt), its idle lanes \
               discounted where lanes diverge (busy share x working lanes / 32 below 24 \
               lanes), is >= 50 % busy and the busiest pipe",
        cost: "how far that discounted share exceeds the next busiest pipe's",
        fix: "fewer special-function calls: an FMA polynomial or a table, hoist them out of \
              loops, or accept it in an epilogue that is not the bottleneck",
        eval: compute::sfu,
    },
    Rule {
        id: "divergence",
        when: "fewer than 24 of 32 lanes do work (predicate on) per warp instruction",
        cost: "the time saved if every pipe and the issue slots did only the working lanes' \
               share of their instructions, where one of them binds; else the idle lanes' \
               share x the schedulers' issue-busy share",
        fix: "keep the working lanes packed into few warps (branch on warp index, sequential \
              addressing) so whole warps go idle, or give idle lanes other work",
        eval: compute::divergence,
    },
    Rule {
        id: "async-stages",
        when: "the kernel copies with cp.async (LDGSTS), the memory SOL is < 60 % and its \
               warps wait on memory (long_scoreboard) or barriers most",
        cost: "the memory left unused x the share of the stalls that wait on the copies \
               (long_scoreboard) and the barriers that publish them",
        fix: "more stages in flight: commit several groups ahead and wait for the oldest \
              (cp.async.wait_group N-1), or TMA with an mbarrier pipeline",
        eval: memory::async_stages,
    },
    Rule {
        id: "barrier",
        when: "barrier waits are the dominant stall and >= 30 % of the warps' stalled states",
        cost: "the issue slots left idle x the barrier's share of the stalls, or where the \
               ADU pipe (which executes the barriers) is the busiest pipe, how far it exceeds \
               the next busiest, whichever is larger",
        fix: "fewer barriers per byte: more work per block between barriers, warp shuffles for \
              the last levels of a tree",
        eval: latency::barrier,
    },
    Rule {
        id: "occupancy",
        when: "the resources cap the resident warps (theoretical occupancy < 50 %) or achieved \
               < 70 % of theoretical, the grid supplies more warps than that cap, and no pipe \
               and no memory is saturated (>= 60 %)",
        cost: "the issue slots left idle x the warp slots left empty x the share of the \
               stalls more warps would hide (waits on results, barriers, fences; not \
               throttles, dispatch stalls or eligible warps left unselected)",
        fix: "",
        eval: latency::occupancy,
    },
    Rule {
        id: "latency",
        when: "memory latency not hidden: long_scoreboard is the dominant stall while the memory \
               SOL is < 70 %",
        cost: "the issue slots left idle x long_scoreboard's share x the memory left unused",
        fix: "more independent loads in flight: coarsen, unroll, 16-byte vector loads, more \
              warps per SM",
        eval: latency::memory_latency,
    },
    Rule {
        id: "tail",
        when: "1 <= waves per SM < 4 with a last partial wave leaving > 20 % of the SMs idle",
        cost: "the SMs' idle share (1 - active cycles / elapsed cycles)",
        fix: "more, smaller blocks (whole waves), or a one-wave grid-stride kernel sized from \
              the occupancy API",
        eval: latency::tail,
    },
    Rule {
        id: "undersized-grid",
        when: "waves per SM < 0.95: the grid supplies fewer warps than the SMs' resources would \
               hold; named for the clusters' placement, its fix their shape (fewer blocks a \
               cluster), when a cluster launch's grid holds every cluster the GPU places at \
               once (launch__cluster_max_active)",
        cost: "the largest of: the SMs' idle share (1 - active cycles / elapsed cycles); the \
               share of each SM's four schedulers left without a warp; and the idle issue \
               slots x the allowed warp slots the grid leaves empty (1 - achieved / \
               theoretical warps) x the stalls more warps would hide",
        fix: "more work per launch (batch, larger problem, split the work into more blocks), \
              or several streams of independent work",
        eval: latency::undersized,
    },
    Rule {
        id: "l2-resident",
        when: "the kernel reads >= 4x more from the L2 than from DRAM, >= 75 % of L2 reads hit, \
               and its DRAM reads fit in the L2",
        cost: "none: a note on what the numbers mean (ncu flushed the caches before this pass, \
               so the hits are the kernel's own re-reads)",
        fix: "judge it inside the real workload (nsys), where neighbouring kernels evict the \
              L2; benchmark it cold (bench --cache cold) and at a working set several times \
              the L2",
        eval: memory::l2_resident,
    },
    Rule {
        id: "stall",
        when: "always, when stalls were collected: the largest warp stall reason, its share, \
               and for a throttle the pipe it comes from",
        cost: "none: context for the faults",
        fix: "",
        eval: latency::stall,
    },
];

/// The regime alone (`memory-bound (DRAM 91.2 %)`), for a table column.
pub fn regime_of(c: &dyn Counters) -> Option<String> {
    bound::regime(c).map(|v| v.verdict)
}

/// The rule `id`, if there is one (the catalogue's expected verdicts are checked against it).
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// Every rule run on `c`, ranked, with the headline.
pub fn diagnose(c: &dyn Counters) -> Diagnosis {
    let mut found = Vec::new();
    let mut silent = Vec::new();
    for rule in &RULES {
        match (rule.eval)(c) {
            Outcome::Found(v) => found.push(Finding {
                rule: rule.id,
                kind: v.kind,
                verdict: v.verdict,
                evidence: v.evidence,
                fix: v.fix.unwrap_or_else(|| rule.fix.to_string()),
                cost: v.cost,
                weight: None,
                at: None,
            }),
            Outcome::Clean => {}
            Outcome::Silent(missing) => silent.push(Silent {
                rule: rule.id,
                missing,
            }),
        }
    }
    rank(found, silent)
}

/// Orders the findings, weighs the faults within what the costlier ones leave, and writes the
/// headline.
fn rank(found: Vec<Finding>, silent: Vec<Silent>) -> Diagnosis {
    let (mut faults, others): (Vec<Finding>, Vec<Finding>) =
        found.into_iter().partition(|f| f.kind == Kind::Fault);
    // Causes before symptoms: a symptom whose cause costs enough to count ranks after it.
    let counting: Vec<&'static str> = faults
        .iter()
        .filter(|f| f.cost.unwrap_or(0.0) >= MIN_COST)
        .map(|f| f.rule)
        .collect();
    let symptom = |f: &Finding| {
        CAUSES
            .iter()
            .any(|(cause, s)| *s == f.rule && counting.contains(cause))
    };
    faults.sort_by(|a, b| {
        symptom(a)
            .cmp(&symptom(b))
            .then(b.cost.unwrap_or(0.0).total_cmp(&a.cost.unwrap_or(0.0)))
    });
    let mut left = 1.0f64;
    let mut kept = Vec::new();
    let mut negligible = Vec::new();
    for mut f in faults {
        let w = f.cost.unwrap_or(0.0).min(left);
        f.weight = Some(w);
        if w >= MIN_COST {
            left -= w;
            kept.push(f);
        } else {
            negligible.push(f);
        }
    }
    let bound = others.iter().find(|f| f.kind == Kind::Bound).cloned();
    let notes: Vec<Finding> = others
        .iter()
        .filter(|f| f.kind == Kind::Note)
        .cloned()
        .collect();
    let context: Vec<Finding> = others
        .iter()
        .filter(|f| f.kind == Kind::Context)
        .cloned()
        .collect();
    let headline = headline(
        bound.as_ref(),
        kept.first().or(notes.first()),
        context.iter().find(|f| f.rule == "stall"),
        &silent,
    );
    let verdict = kept.first().or(notes.first()).map(|f| f.rule);
    let mut findings: Vec<Finding> = bound.into_iter().collect();
    findings.extend(kept);
    findings.extend(notes);
    findings.extend(context);
    Diagnosis {
        headline,
        verdict,
        findings,
        negligible,
        silent,
    }
}

/// `memory-bound (DRAM 91.2 %); first fix: uncoalesced global access (~79 % of its time): …`,
/// or the bound and why it is healthy; a latency-bound kernel without a fault says what its
/// warps wait for most.
fn headline(
    bound: Option<&Finding>,
    first: Option<&Finding>,
    stall: Option<&Finding>,
    silent: &[Silent],
) -> String {
    let what = bound.map_or("regime unknown (no Speed of Light)".to_string(), |b| {
        b.verdict.clone()
    });
    let line = match first {
        Some(f) if f.kind == Kind::Fault => format!(
            "{what}; first fix: {} (~{} of its time): {}",
            f.verdict,
            fmt::share(f.weight.or(f.cost).unwrap_or(0.0)),
            short_fix(&f.fix)
        ),
        Some(f) => format!("{what}; note: {}", f.verdict),
        None if what.starts_with("latency-bound") => format!(
            "{what}: no fault costs {} or more{}",
            fmt::share(MIN_COST),
            stall.map_or(String::new(), |s| format!(
                "; {}",
                s.verdict
                    .replacen("dominant stall: ", "the warps wait most on ", 1)
            ))
        ),
        None => match bound {
            Some(b) if !b.fix.is_empty() => format!("{what}: {}", short_fix(&b.fix)),
            _ => what,
        },
    };
    // A kernel is called healthy only by rules that ran: where a fault rule could not, the
    // headline says which and how to collect what it lacks.
    let unjudged: Vec<&Silent> = silent
        .iter()
        .filter(|s| rule(s.rule).is_some_and(|r| !r.fix.is_empty()))
        .collect();
    if first.is_some_and(|f| f.kind == Kind::Fault) || unjudged.is_empty() {
        return line;
    }
    let names: Vec<&str> = unjudged.iter().map(|s| s.rule).collect();
    let mut metrics: Vec<&str> = unjudged.iter().map(|s| s.missing).collect();
    metrics.dedup();
    format!(
        "{line}; not judged: {} (the report lacks {}: profile again with `ncu --set full \
         --metrics {}`, or `cargo xtask profile -- PROGRAM`)",
        names.join(", "),
        metrics.join(", "),
        metrics.join(",")
    )
}

/// The fix's first clause, for the headline.
fn short_fix(fix: &str) -> &str {
    fix.split([';', ':']).next().unwrap_or(fix).trim()
}

/// The rules as text (`profile --rules`): the order, when each fires, how its cost is weighed.
pub fn rules_text() -> String {
    let mut out = format!(
        "Diagnosis rules, in reading order. Each fault's cost is an estimate of the share of the \
         kernel's time it accounts for: where a unit paces the kernel, the time saved if the \
         fault's excess work left that unit (until the next busiest binds); where none does, \
         the idle issue slots the fault's stalls account for. The faults are ranked by it, \
         causes before the symptoms they inflate (occupancy, tail, undersized-grid and spills \
         before latency; divergence before sfu; atomics and bank-conflicts before barrier), \
         each weighed within what the costlier ones leave, and one under {} of what is left \
         to it is listed as negligible, never as an alarm. The headline names the bound and \
         the first fault (or a note, or says the kernel is healthy, naming any rule that \
         could not run).\n",
        fmt::share(MIN_COST)
    );
    for r in &RULES {
        out += &format!("\n[{}]\n  fires: {}\n  cost:  {}\n", r.id, r.when, r.cost);
        if r.fix.is_empty() {
            out += "  fix:   depends on the case (printed with the verdict)\n";
        } else {
            out += &format!("  fix:   {}\n", r.fix);
        }
    }
    out
}

/// The largest of the pipes' busy shares (%) and its name.
fn busiest_pipe(c: &dyn Counters) -> Option<(&'static str, f64)> {
    busiest_pipe_but(c, "")
}

/// The largest busy share (%) and name among the pipes other than the one `metric` counts: what
/// a pipe that saturates stands above.
fn busiest_pipe_but(c: &dyn Counters, metric: &str) -> Option<(&'static str, f64)> {
    m::PIPES
        .iter()
        .filter(|(_, m)| *m != metric)
        .filter_map(|(name, metric)| Some((*name, c.m(metric)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// What is left of the busiest unit (0–1): 1 − the largest of the SM's and the memory's SOL
/// and every unit's busy share. Waiting costs time only where nothing is saturated: a
/// tensor-core GEMM issues few instructions while its tensor pipe is full.
fn headroom(c: &dyn Counters) -> Option<f64> {
    let busiest = [
        c.m(m::SM_PCT),
        c.m(m::MEM_PCT),
        units::binder(c).map(|(_, p)| p),
    ]
    .into_iter()
    .flatten()
    .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))))?;
    Some((1.0 - busiest / 100.0).clamp(0.0, 1.0))
}
