//! `--kernel`'s rule: which catalogue kernels a spec names.

use super::{KERNELS, Kernel, find};
use crate::{Dtype, Family};

/// One kernel a `--kernel` spec picked, with the element type when the spec named an entry
/// point (`reduce_v3_i32`).
#[derive(Clone, Copy, Debug)]
pub struct Selected {
    pub kernel: &'static Kernel,
    pub dtype: Option<Dtype>,
}

impl PartialEq for Selected {
    fn eq(&self, other: &Selected) -> bool {
        self.kernel.name == other.kernel.name && self.dtype == other.dtype
    }
}

/// `--kernel`'s rule, the same in every command. Each comma-separated item is, in this order:
/// `all`; a family name (`reduce`, `transpose`, `ceiling`, `launch_gap`, `faults`, or `reductions`,
/// `transposes`); a kernel's exact name (`reduce_v3`, `cub_reduce_sum`); a PTX entry point
/// (`reduce_v3_i32`); a name without its family's name in front (`v3`, `padded`); or a substring of exactly one
/// kernel's name (`cub`, `shfl`).
/// The result keeps the order given, without duplicates. A substring that matches several
/// kernels, or none, is an error that lists the candidates.
pub fn select(spec: &str) -> Result<Vec<Selected>, String> {
    let mut out: Vec<Selected> = Vec::new();
    let mut push = |s: Selected| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    let whole = |k: &'static Kernel| Selected {
        kernel: k,
        dtype: None,
    };
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if item == "all" {
            KERNELS.iter().map(whole).for_each(&mut push);
            continue;
        }
        if let Some(f) = Family::ALL
            .into_iter()
            .find(|f| f.name() == item || f.aliases().contains(&item))
        {
            KERNELS
                .iter()
                .filter(|k| k.family == f)
                .map(whole)
                .for_each(&mut push);
            continue;
        }
        if let Some(k) = find(item) {
            push(whole(k));
            continue;
        }
        if let Some((k, d)) = KERNELS.iter().find_map(|k| {
            k.dtypes
                .iter()
                .find(|&&d| k.entry(d) == item)
                .map(|&d| (k, d))
        }) {
            push(Selected {
                kernel: k,
                dtype: Some(d),
            });
            continue;
        }
        // The name without its family's name in front: `v3` is reduce_v3 even though
        // reduce_v3_shfl contains it too.
        if let Some(k) = KERNELS.iter().find(|k| {
            k.name
                .strip_prefix(k.family.name())
                .and_then(|short| short.strip_prefix('_'))
                == Some(item)
        }) {
            push(whole(k));
            continue;
        }
        let matches: Vec<&'static Kernel> =
            KERNELS.iter().filter(|k| k.name.contains(item)).collect();
        match matches[..] {
            [k] => push(whole(k)),
            [] => {
                return Err(format!(
                    "'{item}' matches no kernel; valid: all, {}, or a kernel: {}",
                    Family::ALL.map(Family::name).join(", "),
                    KERNELS
                        .iter()
                        .map(|k| k.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            _ => {
                return Err(format!(
                    "'{item}' matches {} kernels ({}): name one",
                    matches.len(),
                    matches
                        .iter()
                        .map(|k| k.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("no kernel named".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(spec: &str) -> Vec<String> {
        select(spec)
            .unwrap()
            .iter()
            .map(|s| match s.dtype {
                Some(d) => s.kernel.entry(d),
                None => s.kernel.name.to_string(),
            })
            .collect()
    }

    #[test]
    fn one_rule_for_names_families_entries_and_substrings() {
        assert_eq!(names("reduce_v3"), ["reduce_v3"]);
        assert_eq!(names("v3"), ["reduce_v3"]);
        assert_eq!(names("shfl"), ["reduce_v3_shfl"]);
        assert_eq!(names("v3_shfl"), ["reduce_v3_shfl"]);
        assert_eq!(names(crate::Runner::Cub.name()), ["cub_reduce_sum"]);
        assert_eq!(names("reduce_v3_i32"), ["reduce_v3_i32"]);
        assert_eq!(names("padded,v3,padded"), ["transpose_padded", "reduce_v3"]);
        let t = names("transposes");
        assert_eq!(t, names("transpose"));
        assert!(t.contains(&"copy_stream".to_string()) && t.contains(&"transpose_v4".to_string()));
        assert_eq!(names("all").len(), KERNELS.len());
    }

    #[test]
    fn an_ambiguous_or_unknown_name_is_refused_with_the_candidates() {
        let e = select("stream").unwrap_err();
        assert!(
            e.contains("copy_stream") && e.contains("read_stream"),
            "{e}"
        );
        let e = select("nope").unwrap_err();
        assert!(e.contains("reduce_v1") && e.contains("launch_gap"), "{e}");
        assert!(select(" , ").is_err());
    }
}
