//! The automatic diagnosis: the seeds' reading order as one table of rules.
//!
//! First the Speed of Light regime (compute-bound, memory-bound, latency-bound, roofline
//! crossover), then the causes in the order the microscope chapter reads them: coalescing,
//! bank conflicts, occupancy and its limiter, the dominant stall, tail effect (waves per SM),
//! spills, divergence. Each rule states when it fires, prints the numbers behind its verdict,
//! and names the fix direction. A rule whose metrics were not collected stays silent.
//!
//! This file holds the thresholds and the rules table; each rule's evaluation is in
//! [`regime`] (the SOL regime and the same-address atomics) or [`causes`] (the rest).

mod causes;
pub mod lines;
mod regime;

pub use causes::stall_meaning;

use super::metrics::{self as m, Row};
use super::predict::fmt_value;
use causes::{bank_conflicts, coalescing, divergence, occupancy, spills, stall, tail};
use regime::{atomics, regime};

/// "High" in the SOL triage: ≥ 70 % of peak (the seeds' threshold).
pub const HIGH_PCT: f64 = 70.0;
/// Memory-bound in DRAM when DRAM throughput is at least this share of the memory SOL.
pub const DRAM_SHARE: f64 = 0.8;
/// Uncoalesced when a warp uses fewer than this many bytes of every 32-byte sector it moves.
pub const MIN_BYTES_PER_SECTOR: f64 = 16.0;
/// Bank conflicts when shared-memory requests take more extra passes (ncu's bank-conflict
/// count: wavefronts beyond the access's minimum) than this on average.
pub const MAX_CONFLICTS_PER_REQUEST: f64 = 0.5;
/// Without the conflict counter: bank conflicts when requests take more passes than this on
/// average (right for 4-byte accesses; a 16-byte access needs 4 passes without any conflict).
pub const MAX_WAVEFRONTS_PER_REQUEST: f64 = 1.5;
/// Occupancy is a problem below this theoretical occupancy (%), or when achieved falls below
/// [`ACHIEVED_SHARE`] of theoretical.
pub const LOW_THEORETICAL_PCT: f64 = 50.0;
pub const ACHIEVED_SHARE: f64 = 0.7;
/// A grid below this many waves per SM cannot fill the GPU.
pub const MIN_WAVES: f64 = 0.95;
/// A last partial wave that leaves this share of the SMs' time idle is a tail effect.
pub const MAX_TAIL_IDLE: f64 = 0.2;
/// Every block's `red` lands on one L2 slice when the busiest slice takes at least this share
/// of the blocks' `red`s (the other slices also count about half as many again: requests
/// passed on from the far L2 partition).
pub const ONE_SLICE_SHARE: f64 = 0.9;
/// L2 cycles between two `red`s to one address when nothing else holds them back: v1 at 2^28
/// f32 on the H200 with the result word in a fast slot (1,048,576 `red`s on one slice, one
/// atomic-unit input cycle each, that unit busy 32.3 % of the kernel: 3.1 cycles per `red`;
/// 3.3 in a slow slot). `results/experiments/trust/atomics/`.
pub const SAME_ADDRESS_RED_CYCLES: f64 = 3.1;
/// Paced by same-address atomics when that chain alone, at [`SAME_ADDRESS_RED_CYCLES`], fills
/// at least this share of the kernel ...
pub const ATOMIC_CHAIN_SHARE: f64 = 0.7;
/// ... and bound by them outright (the regime) from this share on.
pub const ATOMIC_BOUND_SHARE: f64 = 0.9;
/// Divergence / predication when fewer lanes than this work per instruction (of 32).
pub const MIN_ACTIVE_LANES: f64 = 24.0;

/// What a rule found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Finding {
    /// The rule's id: `regime`, `coalescing`, …
    pub rule: &'static str,
    /// One line: `memory-bound (DRAM)`.
    pub verdict: String,
    /// The numbers behind it.
    pub evidence: String,
    /// Which way the fix goes.
    pub fix: String,
    /// Where in the source (or the SASS) it happens, from ncu's Source page (`profile
    /// --source`; see [`lines::locate`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// A rule's result before the table adds its id and default fix.
struct Verdict {
    verdict: String,
    evidence: String,
    /// Replaces the rule's own fix where the case needs a different one.
    fix: Option<String>,
}

/// One diagnosis rule.
pub struct Rule {
    pub id: &'static str,
    /// When it fires, with its thresholds.
    pub when: &'static str,
    /// The fix direction.
    pub fix: &'static str,
    eval: fn(&Row) -> Option<Verdict>,
}

/// Every rule, in reading order. The first, `regime`, fires whenever SOL was collected.
pub const RULES: [Rule; 9] = [
    Rule {
        id: "regime",
        when: "SOL compute (SM) and memory throughput, each high at >= 70 % of peak: compute-bound, \
               memory-bound, latency-bound (both low) or roofline crossover (both high)",
        fix: "",
        eval: regime,
    },
    Rule {
        id: "atomics",
        when: "the busiest L2 slice takes >= 90 % of the blocks' `red`s (every block adds to one \
               result word), and that chain at 3.1 L2 cycles per `red` fills >= 70 % of the kernel \
               (regime: atomic-bound from 90 %)",
        fix: "fewer same-address atomics: more elements per block (v4's coarsening), one wave of \
              blocks (v6), or per-block partials summed by a second pass",
        eval: atomics,
    },
    Rule {
        id: "coalescing",
        when: "global loads or stores use < 16 of the 32 bytes of each sector they move \
               (sectors/request far above 4 for 4-byte lanes)",
        fix: "make a warp's lanes touch consecutive addresses: stage through shared memory \
              (transpose the tile), change the layout, vectorize",
        eval: coalescing,
    },
    Rule {
        id: "bank-conflicts",
        when: "shared-memory requests take > 0.5 extra wavefronts (bank conflicts: passes through \
               the banks beyond the access's minimum) on average; without the conflict counter, \
               > 1.5 wavefronts per request",
        fix: "pad the tile (+1 column), swizzle, or address so a warp's active lanes sit on \
              different banks (sequential addressing)",
        eval: bank_conflicts,
    },
    Rule {
        id: "occupancy",
        when: "theoretical occupancy < 50 %, or achieved < 70 % of theoretical",
        fix: "",
        eval: occupancy,
    },
    Rule {
        id: "stall",
        when: "always: the largest warp stall reason and its share of all stalls",
        fix: "",
        eval: stall,
    },
    Rule {
        id: "tail",
        when: "waves per SM < 0.95 (the grid cannot fill the GPU), or 1 <= waves < 4 with a last \
               partial wave leaving > 20 % of the SMs' time idle",
        fix: "more work per launch (batch, larger problem), or a one-wave grid-stride kernel \
              sized from the occupancy API",
        eval: tail,
    },
    Rule {
        id: "spills",
        when: "any local-memory traffic (register spills, local arrays)",
        fix: "fewer live values (smaller tiles, less unrolling), a register budget per thread; \
              look for ld.local/st.local with `cargo xtask asm`",
        eval: spills,
    },
    Rule {
        id: "divergence",
        when: "fewer than 24 of 32 lanes do work (predicate on) per warp instruction",
        fix: "keep the working lanes packed into few warps (v3's sequential addressing) so \
              whole warps go idle, or give idle lanes other work",
        eval: divergence,
    },
];

/// Every rule that fires for `row`, regime first.
pub fn diagnose(row: &Row) -> Vec<Finding> {
    RULES
        .iter()
        .filter_map(|rule| {
            let v = (rule.eval)(row)?;
            Some(Finding {
                rule: rule.id,
                verdict: v.verdict,
                evidence: v.evidence,
                fix: v.fix.unwrap_or_else(|| rule.fix.to_string()),
                at: None,
            })
        })
        .collect()
}

/// The rules table as text (`cargo xtask profile --rules`).
pub fn rules_text() -> String {
    let mut out = String::from("Diagnosis rules, in reading order:\n");
    for r in &RULES {
        out += &format!("\n[{}]\n  fires: {}\n", r.id, r.when);
        if !r.fix.is_empty() {
            out += &format!("  fix:   {}\n", r.fix);
        } else {
            out += "  fix:   depends on the case (printed with the verdict)\n";
        }
    }
    out
}

/// `compute-bound`, `memory-bound (DRAM)`, … : the regime alone, for a table column.
pub fn regime_of(row: &Row) -> Option<String> {
    regime(row).map(|v| v.verdict)
}

fn pct(x: f64) -> String {
    format!("{x:.1} %")
}
