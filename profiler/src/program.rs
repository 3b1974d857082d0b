//! Any program's kernels, diagnosed: what `profile -- PROGRAM` and `profile --report` print.
//! A summary line per profiled launch (its name as a person reads it, its time under ncu,
//! the headline), then each kernel's profile.

use crate::diagnose::{self, Diagnosis, Kind};
use crate::ncu::metrics as m;
use crate::ncu::{Counters, Launch};
use crate::{fmt, names, report, table};

/// One profiled launch and its diagnosis.
#[derive(Debug, serde::Serialize)]
pub struct Kernel {
    /// ncu's result ID: the launch's place among those profiled.
    pub id: u64,
    /// The name ncu reported (demangled).
    pub name: String,
    /// The name for tables ([`names::short`]).
    pub short: String,
    pub diagnosis: Diagnosis,
    #[serde(skip)]
    pub launch: Launch,
}

/// Every launch diagnosed, in the order ncu profiled them.
pub fn diagnose_all(launches: Vec<Launch>) -> Vec<Kernel> {
    launches
        .into_iter()
        .map(|l| Kernel {
            id: l.id,
            name: l.kernel.clone(),
            short: names::short(&l.kernel),
            diagnosis: diagnose::diagnose(&l),
            launch: l,
        })
        .collect()
}

/// One line per launch: its number, name, time under ncu, what binds it and the first fix
/// with its estimated share of the time.
pub fn summary(kernels: &[Kernel]) -> String {
    let headers: Vec<String> = ["#", "kernel", "ncu µs", "bound", "first fix"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = kernels
        .iter()
        .map(|k| {
            let d = &k.diagnosis;
            let bound = d
                .findings
                .iter()
                .find(|f| f.kind == Kind::Bound)
                .map_or("n/a".to_string(), |f| f.verdict.clone());
            let first = match d.verdict.and_then(|v| d.get(v)) {
                Some(f) => match f.weight {
                    Some(w) => format!("{} ({})", f.rule, fmt::share(w)),
                    None => format!("{} (note)", f.rule),
                },
                None => "none: healthy".into(),
            };
            vec![
                k.id.to_string(),
                shorter(&k.short, 48),
                k.launch
                    .m(m::DURATION)
                    .map_or("n/a".into(), |ns| format!("{:.1}", ns / 1e3)),
                bound,
                first,
            ]
        })
        .collect();
    table::render_aligned(&headers, &rows, &[1, 3, 4])
}

/// The summary, then every kernel's profile. `how` says how the launches were captured.
pub fn text(kernels: &[Kernel], how: &str) -> String {
    let mut out = format!("profile: {how}\n\n");
    out += &summary(kernels);
    for k in kernels {
        let launch = format!(
            "launch {}: grid {}, block {}, {} registers/thread",
            k.id,
            k.launch.grid,
            k.launch.block,
            k.launch.m(m::REGISTERS).map_or("n/a".into(), fmt::value)
        );
        out += "\n";
        if k.short != k.name {
            out += &format!("{}\n", k.name);
        }
        out += &report::kernel_text(&k.short, &launch, &k.launch, &k.diagnosis);
    }
    out
}

/// `s` cut to `max` characters with `…`.
fn shorter(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max - 1).collect::<String>() + "…"
    }
}
