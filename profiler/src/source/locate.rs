//! The diagnosis pointed at source lines: each finding whose mechanism ncu's Source page
//! attributes to instructions says where most of it happens (`barrier stalls: 83 % at
//! reduce.rs:86`), or, in a kernel without line tables, at which SASS instruction.

use super::{KernelSource, Origin, Totals};
use crate::diagnose::Diagnosis;
use crate::ncu::Counters;
use sass::counts::InstClass;
use sass::disasm::classify;

/// Fills the `at` of each finding that this kernel's source lines can answer.
pub fn locate(c: &dyn Counters, d: &mut Diagnosis, k: &KernelSource) {
    for f in d.all_mut() {
        let stall = |reason: &str| biggest(k, &format!("{reason} stalls"), |t| t.stall(reason));
        f.at = match f.rule {
            "stall" => c.dominant_stall().and_then(|(reason, _, _)| stall(reason)),
            "barrier" => stall("barrier"),
            "latency" | "async-stages" | "occupancy" => stall("long_scoreboard"),
            "bank-conflicts" => biggest(k, "extra shared wavefronts", |t| {
                t.shared_excess.unwrap_or(0)
            }),
            "coalescing" => biggest(k, "extra global sectors", |t| t.global_excess.unwrap_or(0)),
            "atomics" => class_at(k, |op| classify(op) == InstClass::Atomic, "the atomics"),
            "regime" if f.verdict.starts_with("atomic-bound") => {
                class_at(k, |op| classify(op) == InstClass::Atomic, "the atomics")
            }
            "spills" => class_at(
                k,
                |op| matches!(classify(op), InstClass::Local { .. }),
                "local loads and stores",
            ),
            "sfu" => class_at(k, |op| op.starts_with("MUFU"), "the special functions"),
            _ => None,
        };
    }
}

/// Each line with its totals, or each instruction when the kernel has no lines.
fn places(k: &KernelSource) -> Vec<(String, Totals)> {
    if matches!(k.origin, Origin::None { .. }) || k.lines.is_empty() {
        return k
            .insts
            .iter()
            .map(|i| (format!("+{:04x} `{}`", i.offset, i.text), i.counts.clone()))
            .collect();
    }
    k.lines
        .iter()
        .map(|l| {
            let at = if l.at.line == 0 {
                "instructions without a line".to_string()
            } else {
                format!("{} (`{}`)", l.at.short(), l.at.text)
            };
            (at, l.totals.clone())
        })
        .collect()
}

/// `what: 83 % at reduce.rs:86 (`sync_threads();`)`: the place with the largest `metric`.
fn biggest(k: &KernelSource, what: &str, metric: impl Fn(&Totals) -> u64) -> Option<String> {
    let places = places(k);
    let total: u64 = places.iter().map(|(_, t)| metric(t)).sum();
    let (at, t) = places.iter().max_by_key(|(_, t)| metric(t))?;
    (total > 0).then(|| {
        format!(
            "{what}: {:.0} % at {at}",
            100.0 * metric(t) as f64 / total as f64
        )
    })
}

/// `the atomics: REDG.E.ADD.F32.FTZ.RN.STRONG.GPU at reduce.rs:44 (`…`)`: where the
/// instructions `is` picks are (the first one, and how many more).
fn class_at(k: &KernelSource, is: impl Fn(&str) -> bool, what: &str) -> Option<String> {
    let hits: Vec<usize> = (0..k.insts.len())
        .filter(|&i| is(&k.insts[i].opcode))
        .collect();
    let &first = hits.first()?;
    let inst = &k.insts[first];
    let at = match k.line_of(first).filter(|l| l.at.line > 0) {
        Some(l) => format!("{} (`{}`)", l.at.short(), l.at.text),
        None => format!("+{:04x}", inst.offset),
    };
    Some(format!(
        "{what}: {} at {at}{}",
        inst.opcode,
        match hits.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        }
    ))
}
