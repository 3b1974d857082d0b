//! ncu's Source page as CSV: `ncu --import R --page source --csv --print-source sass` (one row
//! per SASS instruction with its counters and warp-stall samples) and `--print-source
//! cuda,sass` (per source file and line, the SASS instructions ncu charges to it).
//!
//! Both pages print each kernel twice, identically; the first copy is kept. The `cuda,sass`
//! page does not escape quotes inside the source text it quotes (a Rust line holding
//! `asm!("…", …)` spills into the next cells), so its line rows are trusted for their number
//! only, and for their text only when the row has as many cells as the header.

use super::Totals;
use anyhow::{Result, bail};
use std::collections::BTreeMap;

/// One SASS instruction of the `sass` page.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Inst {
    /// Bytes from the kernel's first instruction (the page's addresses are the JIT's).
    pub offset: u64,
    /// `@!P1  LDS R3, [R9]`, as ncu prints it (trimmed).
    pub text: String,
    /// `LDS`, `BAR.SYNC.DEFER_BLOCKING`: the opcode without guard and operands.
    pub opcode: String,
    /// Its counters: the same fields a source line sums them into.
    #[serde(flatten)]
    pub counts: Totals,
}

/// One kernel of the `sass` page.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// `reduce_v3_f32`.
    pub function: String,
    /// The JIT's address of the first instruction (the `cuda,sass` page uses the same).
    pub base: u64,
    pub insts: Vec<Inst>,
}

/// The page's stall columns (`stall_long_sb`) under the names of ncu's stall metrics
/// (`long_scoreboard`, as in `smsp__average_warps_issue_stalled_long_scoreboard_…`).
pub fn stall_name(column: &str) -> Option<&str> {
    let short = column.strip_prefix("stall_")?;
    if short.ends_with("(Not Issued)") {
        return None;
    }
    Some(match short {
        "long_sb" => "long_scoreboard",
        "short_sb" => "short_scoreboard",
        "lg" => "lg_throttle",
        "mio" => "mio_throttle",
        "math" => "math_pipe_throttle",
        "tex" => "tex_throttle",
        "dispatch" => "dispatch_stall",
        "imc" => "imc_miss",
        "no_inst" => "no_instruction",
        "sleep" => "sleeping",
        other => other,
    })
}

/// `1,234` or `1234` → 1234; `-`, empty or text → None.
fn count(cell: &str) -> Option<u64> {
    let s = cell.trim().replace(',', "");
    s.parse::<u64>()
        .ok()
        .or_else(|| s.parse::<f64>().ok().map(|x| x.round() as u64))
}

fn hex(cell: &str) -> Option<u64> {
    u64::from_str_radix(cell.trim().strip_prefix("0x")?, 16).ok()
}

/// `@!P1  LDS R3, [R9]` → `LDS`.
pub fn opcode(sass: &str) -> String {
    let s = sass.trim();
    let s = match s.strip_prefix('@') {
        Some(rest) => rest.split_once(char::is_whitespace).map_or("", |x| x.1),
        None => s,
    };
    s.split_whitespace()
        .next()
        .unwrap_or("")
        .trim_end_matches(';')
        .to_string()
}

fn records(text: &str) -> Result<Vec<Vec<String>>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    for rec in r.records() {
        out.push(rec?.iter().map(str::to_string).collect());
    }
    Ok(out)
}

/// Parses the `sass` page: every kernel once, its instructions in address order.
pub fn parse_sass(text: &str) -> Result<Vec<Kernel>> {
    let rows = records(text)?;
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        if rows[i].first().map(String::as_str) != Some("Kernel Name") {
            i += 1;
            continue;
        }
        let function = rows[i].get(1).cloned().unwrap_or_default();
        let header = rows.get(i + 1).cloned().unwrap_or_default();
        i += 2;
        let col = |name: &str| header.iter().position(|h| h == name);
        let (Some(addr), Some(src), Some(samples), Some(executed)) = (
            col("Address"),
            col("Source"),
            col("Warp Stall Sampling (All Samples)"),
            col("Instructions Executed"),
        ) else {
            bail!(
                "the sass source page of {function} lacks Address, Source, Warp Stall Sampling (All Samples) or Instructions Executed: was it exported with --page source --print-source sass?"
            );
        };
        let stall_cols: Vec<(usize, String)> = header
            .iter()
            .enumerate()
            .filter_map(|(j, h)| Some((j, stall_name(h)?.to_string())))
            .collect();
        let opt = |name: &str| col(name);
        let (sw, sx, gs, gx) = (
            opt("L1 Wavefronts Shared"),
            opt("L1 Wavefronts Shared Excessive"),
            opt("L2 Theoretical Sectors Global"),
            opt("L2 Theoretical Sectors Global Excessive"),
        );
        let mut insts = Vec::new();
        let mut base = None;
        while i < rows.len() && rows[i].first().map(String::as_str) != Some("Kernel Name") {
            let r = &rows[i];
            i += 1;
            let Some(a) = r.get(addr).and_then(|c| hex(c)) else {
                continue;
            };
            let base = *base.get_or_insert(a);
            let cell = |j: Option<usize>| j.and_then(|j| r.get(j)).and_then(|c| count(c));
            let text = r.get(src).map_or("", |s| s.trim()).to_string();
            insts.push(Inst {
                offset: a.saturating_sub(base),
                opcode: opcode(&text),
                text,
                counts: Totals {
                    samples: cell(Some(samples)).unwrap_or(0),
                    executed: cell(Some(executed)).unwrap_or(0),
                    stalls: stall_cols
                        .iter()
                        .filter_map(|(j, name)| Some((name.clone(), cell(Some(*j))?)))
                        .filter(|(_, n)| *n > 0)
                        .collect(),
                    shared_wavefronts: cell(sw),
                    shared_excess: cell(sx),
                    global_sectors: cell(gs),
                    global_excess: cell(gx),
                },
            });
        }
        if kernels.iter().any(|k| k.function == function) {
            continue;
        }
        kernels.push(Kernel {
            function,
            base: base.unwrap_or(0),
            insts,
        });
    }
    Ok(kernels)
}

/// What the `cuda,sass` page says about one kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lines {
    pub function: String,
    /// Per instruction address, every `(file, line)` ncu lists it under, in page order. For
    /// inlined code ncu lists the instruction under several lines of its inline chain (not
    /// always all of them, and not in order), so this is a set of candidates.
    pub at: BTreeMap<u64, Vec<(String, u32)>>,
    /// The text of each listed line as ncu captured it (`--import-source yes`), trimmed, where
    /// its row parsed whole.
    pub text: BTreeMap<(String, u32), String>,
}

/// The `cuda,sass` page: per kernel the lines ncu charges its instructions to, and the names
/// of the kernels ncu found no line info for (`No lineinfo available … related to 'k'`).
pub fn parse_cuda_sass(text: &str) -> Result<(Vec<Lines>, Vec<String>)> {
    let no_lines: Vec<String> = text
        .lines()
        .filter(|l| l.contains("No lineinfo available"))
        .filter_map(|l| l.split('\'').nth(1).map(str::to_string))
        .collect();
    let rows = records(
        &text
            .lines()
            .filter(|l| !l.starts_with("=="))
            .collect::<Vec<_>>()
            .join("\n"),
    )?;
    let mut out: Vec<Lines> = Vec::new();
    let mut file = String::new();
    let mut width = 0;
    let mut current: Option<usize> = None;
    let mut line: Option<u32> = None;
    for r in &rows {
        let first = r.first().map_or("", String::as_str);
        match first {
            "File Path" => {
                file = r.get(1).cloned().unwrap_or_default();
                current = None;
            }
            "Function Name" => {
                let f = r.get(1).cloned().unwrap_or_default();
                current = Some(match out.iter().position(|l| l.function == f) {
                    Some(k) => k,
                    None => {
                        out.push(Lines {
                            function: f,
                            ..Lines::default()
                        });
                        out.len() - 1
                    }
                });
            }
            "Line No" => width = r.len(),
            "" => {
                let (Some(k), Some(l)) = (current, line) else {
                    continue;
                };
                if let Some(a) = r.get(2).and_then(|c| hex(c)) {
                    let at = out[k].at.entry(a).or_default();
                    if !at.iter().any(|(f, n)| *f == file && *n == l) {
                        at.push((file.clone(), l));
                    }
                }
            }
            n => {
                line = n.trim().parse().ok();
                if let (Some(k), Some(l)) = (current, line)
                    && r.len() == width
                    && let Some(t) = r.get(1)
                    && t != "<Unable to open source file>"
                {
                    out[k].text.insert((file.clone(), l), t.trim().to_string());
                }
            }
        }
    }
    Ok((out, no_lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_without_guard_or_operands() {
        assert_eq!(opcode("@!P1  LDS R3, [R9]"), "LDS");
        assert_eq!(
            opcode("      BAR.SYNC.DEFER_BLOCKING 0x0"),
            "BAR.SYNC.DEFER_BLOCKING"
        );
        assert_eq!(opcode("@P0   EXIT"), "EXIT");
        assert_eq!(opcode("NOP"), "NOP");
    }

    #[test]
    fn stall_columns_take_the_metric_names() {
        assert_eq!(stall_name("stall_long_sb"), Some("long_scoreboard"));
        assert_eq!(stall_name("stall_barrier"), Some("barrier"));
        assert_eq!(stall_name("stall_barrier (Not Issued)"), None);
        assert_eq!(stall_name("L1 Wavefronts Shared"), None);
        // Every name the page can carry is one the raw page's stall metrics use.
        for c in [
            "barrier",
            "branch_resolving",
            "dispatch",
            "drain",
            "imc",
            "lg",
            "long_sb",
            "math",
            "membar",
            "mio",
            "misc",
            "no_inst",
            "not_selected",
            "selected",
            "short_sb",
            "sleep",
            "tex",
            "wait",
        ] {
            let column = format!("stall_{c}");
            let name = stall_name(&column).unwrap();
            assert!(
                crate::ncu::metrics::STALL_REASONS.contains(&name),
                "{c} → {name}"
            );
        }
    }
}
