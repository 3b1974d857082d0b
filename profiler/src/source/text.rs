//! `profile --source`'s text: one block per kernel, after its summary and diagnosis.

use super::{KernelSource, LineRow, Origin, Totals, page};
use crate::fmt;

/// SASS instructions shown under a line (all of them with `--sass`), and hot instructions
/// listed for a kernel without lines.
const TOP_SASS: usize = 3;
const TOP_INSTRUCTIONS: usize = 12;

fn n(x: u64) -> String {
    fmt::thousands(x as i64)
}

fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        "n/a".into()
    } else {
        format!("{:.1} %", 100.0 * part as f64 / whole as f64)
    }
}

/// `long_scoreboard 6,186, short_scoreboard 98`: the `k` largest stall reasons.
fn stalls(t: &Totals, k: usize) -> String {
    t.top_stalls()
        .iter()
        .take(k)
        .map(|(r, c)| format!("{r} {}", n(*c)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `shared 655,360 wavefronts (0 extra) · global 2,097,152 sectors (0 extra)`, where nonzero.
fn memory(t: &Totals) -> String {
    let mut parts = Vec::new();
    if let Some(w) = t.shared_wavefronts.filter(|w| *w > 0) {
        parts.push(format!(
            "shared {} wavefronts ({} extra: bank conflicts)",
            n(w),
            n(t.shared_excess.unwrap_or(0))
        ));
    }
    if let Some(s) = t.global_sectors.filter(|s| *s > 0) {
        parts.push(format!(
            "global {} sectors ({} extra: uncoalesced)",
            n(s),
            n(t.global_excess.unwrap_or(0))
        ));
    }
    parts.join(" · ")
}

const HEAD: &str = "     share    samples     warp inst  ";

fn numbers(part: &Totals, whole: &Totals) -> String {
    format!(
        "   {:>7} {:>10} {:>13}  ",
        share(part.samples, whole.samples),
        n(part.samples),
        n(part.executed)
    )
}

fn sass_row(i: &page::Inst, pad: &str) -> String {
    let top: Vec<String> = i
        .counts
        .clone()
        .top_stalls()
        .iter()
        .take(2)
        .map(|(r, c)| format!("{r} {}", n(*c)))
        .collect();
    let row = format!(
        "{pad}+{:04x}  {:<44} {:>8}  {}",
        i.offset,
        i.text,
        n(i.counts.samples),
        top.join(", ")
    );
    format!("{}\n", row.trim_end())
}

/// The block for one kernel; `all_sass` lists every instruction under its line.
pub fn kernel_text(k: &KernelSource, all_sass: bool) -> String {
    let mut out = format!(
        "  {}     {}: {} warp samples, {} warp instructions; hottest first\n",
        if matches!(k.origin, Origin::None { .. }) {
            "Hot SASS    "
        } else {
            "Source lines"
        },
        k.function,
        n(k.totals.samples),
        n(k.totals.executed)
    );
    match &k.origin {
        Origin::Chains { made_by } => {
            out += &format!("    lines from {made_by}, matched to ncu's SASS by address\n");
            out += "    code inlined from core, core::arch and the device layer counts at the kernel line that called it (↳ beneath)\n";
        }
        Origin::Ncu { why } => {
            out += &format!(
                "    lines: the one ncu lists each instruction under (a kernel line before library code), without inline chains: {why}\n"
            );
        }
        Origin::None { why } => {
            out += &format!("    no source lines: {why}; the hottest SASS instructions instead\n");
            return out
                + &hot_instructions(
                    k,
                    if all_sass {
                        usize::MAX
                    } else {
                        TOP_INSTRUCTIONS
                    },
                );
        }
    }
    if k.moved_barrier > 0 {
        out += &format!(
            "    {} barrier samples shown at their barrier (ncu records a warp waiting at BAR on the instruction after it)\n",
            n(k.moved_barrier)
        );
    }
    if !k.changed.is_empty() {
        out += &format!(
            "    {} changed since the capture: their lines show the text ncu captured\n",
            k.changed.join(", ")
        );
    }
    out += HEAD;
    out += "line\n";
    let pad = " ".repeat(HEAD.chars().count());
    let (hot, cold): (Vec<&LineRow>, Vec<&LineRow>) =
        k.lines.iter().partition(|l| l.totals.samples > 0);
    for l in hot {
        out += &numbers(&l.totals, &k.totals);
        out += &if l.at.line == 0 {
            format!("{}\n", l.at.path)
        } else {
            format!("{}:{}  {}\n", l.at.path, l.at.line, l.at.text)
        };
        let mut facts = Vec::new();
        let s = stalls(&l.totals, 3);
        if !s.is_empty() {
            facts.push(format!("stalls {s}"));
        }
        let m = memory(&l.totals);
        if !m.is_empty() {
            facts.push(m);
        }
        if !facts.is_empty() {
            out += &format!("{pad}{}\n", facts.join(" · "));
        }
        for x in &l.inner {
            out += &format!(
                "{pad}{}↳ {}:{}  {}   ({} samples)\n",
                "  ".repeat(x.depth - 1),
                x.at.path,
                x.at.line,
                x.at.text,
                n(x.samples)
            );
        }
        let mut shown: Vec<usize> = l.insts.clone();
        if !all_sass {
            shown.sort_by(|a, b| k.insts[*b].counts.samples.cmp(&k.insts[*a].counts.samples));
            shown.retain(|i| k.insts[*i].counts.samples > 0);
            shown.truncate(TOP_SASS);
            shown.sort();
        }
        for i in shown {
            out += &sass_row(&k.insts[i], &pad);
        }
    }
    if !cold.is_empty() {
        out += &format!(
            "    and {} more lines without samples ({} warp instructions)\n",
            cold.len(),
            n(cold.iter().map(|l| l.totals.executed).sum())
        );
    }
    out
}

/// The `top` instructions with the most samples, hottest first.
pub fn hot_instructions(k: &KernelSource, top: usize) -> String {
    let mut order: Vec<usize> = (0..k.insts.len()).collect();
    order.sort_by(|a, b| {
        k.insts[*b]
            .counts
            .samples
            .cmp(&k.insts[*a].counts.samples)
            .then(a.cmp(b))
    });
    order.retain(|i| k.insts[*i].counts.samples > 0);
    let mut out = format!("{HEAD}instruction\n");
    for &i in order.iter().take(top) {
        let inst = &k.insts[i];
        let t = inst.counts.clone();
        out += &numbers(&t, &k.totals);
        let row = format!("+{:04x}  {:<44} {}", inst.offset, inst.text, stalls(&t, 3));
        out += &format!("{}\n", row.trim_end());
    }
    if order.len() > top {
        out += &format!(
            "    and {} more instructions with samples (--sass lists them all)\n",
            order.len() - top
        );
    }
    out
}
