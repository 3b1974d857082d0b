//! `--diff`: two kernels (or one kernel across two backends), their counts side by side and
//! their listings diffed with what always differs taken out.

use super::report::{KernelStats, kernel_stats, metrics, table};
use super::{Build, View, listing, print_json};
use crate::util;
use anyhow::{Result, bail};
use catalog::Format;
use regex::Regex;
use sass::source::Sources;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Serialize)]
struct Diff {
    a: KernelStats,
    b: KernelStats,
    /// (metric, a, b) for each metric that differs.
    differing: Vec<(String, String, String)>,
    /// Unified diff of the normalized listings (PTX, or SASS with --sass); absent with --stats.
    #[serde(skip_serializing_if = "Option::is_none")]
    listing_diff: Option<String>,
}

/// `--diff A B` (per backend) or `--diff A` across two backends.
pub fn diff(builds: &mut [Build], sides: &[String], view: View) -> Result<()> {
    // (build index, kernel) pairs to compare.
    let mut pairs: Vec<((usize, String), (usize, String))> = Vec::new();
    let resolve = |b: &Build, p: &String| -> Result<Vec<String>> {
        let ks = b.kernels(std::slice::from_ref(p));
        if ks.is_empty() {
            bail!("no kernel matches '{p}' in the {} PTX", b.backend);
        }
        Ok(ks)
    };
    match sides {
        [a, b] => {
            for (i, build) in builds.iter().enumerate() {
                let (ka, kb) = (resolve(build, a)?, resolve(build, b)?);
                if ka.len() != kb.len() {
                    bail!(
                        "'{a}' names {} kernels and '{b}' {}: name one each",
                        ka.len(),
                        kb.len()
                    );
                }
                pairs.extend(ka.into_iter().zip(kb).map(|(x, y)| ((i, x), (i, y))));
            }
        }
        [a] => {
            if builds.len() != 2 {
                bail!(
                    "--diff {a} with one kernel compares two builds of it: add --backend \
                     llvm,nvvm, or a second --ptx FILE (or name two kernels)"
                );
            }
            let (k0, k1) = (resolve(&builds[0], a)?, resolve(&builds[1], a)?);
            pairs.extend(
                k0.into_iter()
                    .filter(|k| k1.contains(k))
                    .map(|k| ((0, k.clone()), (1, k))),
            );
        }
        _ => bail!("--diff takes one or two kernels"),
    }
    let mut sources = Sources::new(util::source_tree());
    let mut out = Vec::new();
    for ((ia, ka), (ib, kb)) in pairs {
        let sa = kernel_stats(&mut builds[ia], &ka)?;
        let sb = kernel_stats(&mut builds[ib], &kb)?;
        let differing = metrics(&sa)
            .into_iter()
            .zip(metrics(&sb))
            .filter(|((_, x), (_, y))| x != y)
            .map(|((k, x), (_, y))| (k, x, y))
            .collect();
        let listing_diff = if view.stats {
            None
        } else {
            let la = normalized(&mut builds[ia], &ka, view.sass, &mut sources)?;
            let lb = normalized(&mut builds[ib], &kb, view.sass, &mut sources)?;
            let (ta, tb) = (la.join("\n") + "\n", lb.join("\n") + "\n");
            let diff = similar::TextDiff::from_lines(&ta, &tb)
                .unified_diff()
                .context_radius(3)
                .header(&sa.label(), &sb.label())
                .to_string();
            Some(diff)
        };
        out.push(Diff {
            a: sa,
            b: sb,
            differing,
            listing_diff,
        });
    }
    if view.format == Format::Json {
        return print_json("diffs", &out);
    }
    let kind = if view.sass { "SASS" } else { "PTX" };
    for d in &out {
        println!("## {} vs {}\n", d.a.label(), d.b.label());
        if d.differing.is_empty() {
            println!("all counts equal\n");
        } else {
            let mut t = table(&["metric", &d.a.label(), &d.b.label()]);
            for (k, x, y) in &d.differing {
                t.add_row(vec![k, x, y]);
            }
            println!("{t}\n(counts not listed are equal)\n");
        }
        match d.listing_diff.as_deref() {
            None => {}
            Some("") => {
                println!("{kind} identical after normalizing names, labels and addresses\n")
            }
            Some(diff) => println!("{kind} diff (names, labels and addresses normalized):\n{diff}"),
        }
    }
    Ok(())
}

/// A listing with what always differs taken out: SASS addresses, label numbers, the kernel's
/// own name (PTX parameter names).
fn normalized(b: &mut Build, name: &str, sass: bool, sources: &mut Sources) -> Result<Vec<String>> {
    let lines = if sass {
        let s = b.sass()?;
        let f = s.function(name).expect("kernel_stats checked it");
        listing::sass_lines(f, false, false, false, sources)
            .into_iter()
            .map(|l| match l.find("*/") {
                Some(i) => l[i + 2..].trim().to_string(),
                None => l,
            })
            .collect()
    } else {
        let f = b.module.entry(name).expect("kernel_stats checked it");
        listing::ptx_lines(f, &b.module, false, sources)
            .into_iter()
            .map(|l| l.replace(name, "KERNEL"))
            .filter(|l| !l.trim_start().starts_with(".loc") && !l.trim().is_empty())
            .collect()
    };
    Ok(renumber_labels(lines))
}

/// `.L_x_24` / `$L__BB3_2` → `L0`, `L1` … in order of first appearance.
fn renumber_labels(lines: Vec<String>) -> Vec<String> {
    let re = Regex::new(r"\.L_x_\d+|\$L__BB\d+_\d+").unwrap();
    let mut names: HashMap<String, String> = HashMap::new();
    lines
        .into_iter()
        .map(|l| {
            re.replace_all(&l, |c: &regex::Captures| {
                let n = names.len();
                names
                    .entry(c[0].to_string())
                    .or_insert_with(|| format!("L{n}"))
                    .clone()
            })
            .into_owned()
        })
        .collect()
}
