//! The PTX checks: read a backend's PTX and fail unless it is what the host launches and what
//! the chapter teaches. Run by `cargo test -p xtask` and by `cargo xtask asm --check` (which
//! adds the SASS checks of [`super::checks`]).
//!
//! - exactly the entry points the kernel catalogue says that backend carries, each with the
//!   parameter count of its launcher (nvcc's C++ twins lack the Rust-only kernels);
//! - `.target sm_90` (rust-cuda's raised from libnvvm's sm_80 by `cargo xtask ptx`), with no
//!   `, debug` (ptxas compiles a debug target without optimization: reduce_v1_f32 went from 74
//!   to 259 SASS instructions, see docs/asm-walkthrough.md);
//! - v1–v5 and the two tiled transposes use `ld.shared`/`st.shared`, never generic loads or
//!   stores (a generic access to shared data costs an address-space check in hardware);
//! - v5 and v6 contain `shfl.sync`; v6 contains a 16-byte global load (`ld.global….v4`).

use anyhow::{Context, Result};
use catalog::Backend;
use sass::counts::InstClass;
use sass::ptx::{self, Module};
use serde::Serialize;
use std::path::Path;

/// One PTX entry point a backend must declare, from the kernel catalogue.
pub struct Entry {
    pub name: String,
    /// Parameters its launcher passes.
    pub params: usize,
}

/// The entry points `backend`'s PTX must have: every catalogued kernel that backend carries,
/// and nothing else (a PTX entry the catalogue lacks fails the check too, so the catalogue
/// cannot fall behind the kernels).
pub fn entry_points_of(backend: Backend) -> Vec<Entry> {
    catalog::KERNELS
        .iter()
        .filter(|k| k.carried_by(backend))
        .flat_map(|k| {
            k.entries().into_iter().map(|name| Entry {
                name,
                params: usize::from(k.params),
            })
        })
        .collect()
}

/// Kernels whose data passes through shared memory as `ld.shared`/`st.shared`.
pub const SHARED_KERNELS: &[&str] = &[
    "reduce_v1_f32",
    "reduce_v1_i32",
    "reduce_v2_f32",
    "reduce_v2_i32",
    "reduce_v3_f32",
    "reduce_v3_i32",
    "reduce_v4_f32",
    "reduce_v4_i32",
    "reduce_v5_f32",
    "reduce_v5_i32",
    "transpose_tiled_f32",
    "transpose_padded_f32",
];

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub backend: Backend,
    pub name: &'static str,
    pub ok: bool,
    /// What was found: the evidence when it passes, the offenders when it fails.
    pub detail: String,
    /// For a failure that is stated and explained (and so does not fail the run): why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known: Option<&'static str>,
}

impl Check {
    pub fn new(
        backend: Backend,
        name: &'static str,
        failures: Vec<String>,
        ok_detail: String,
    ) -> Check {
        let ok = failures.is_empty();
        Check {
            backend,
            name,
            ok,
            detail: if ok { ok_detail } else { failures.join("; ") },
            known: None,
        }
    }

    /// Fails the run: failed and not a known, explained difference.
    pub fn fails(&self) -> bool {
        !self.ok && self.known.is_none()
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = match (self.ok, self.known) {
            (true, _) => "ok   ",
            (false, Some(_)) => "known",
            (false, None) => "FAIL ",
        };
        write!(
            f,
            "{status} [{}] {}: {}",
            self.backend, self.name, self.detail
        )?;
        if let (false, Some(why)) = (self.ok, self.known) {
            write!(f, "\n      known: {why}")?;
        }
        Ok(())
    }
}

/// Reads a backend's PTX file; a missing file is an error that names the command to run.
pub fn read(path: &Path, backend: Backend) -> Result<Module> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "no {backend} PTX at {}: run cargo xtask ptx --backend {backend}",
            path.display()
        )
    })?;
    Ok(Module::parse(&text))
}

/// Every PTX check, on one backend's module.
pub fn check_module(m: &Module, backend: Backend) -> Vec<Check> {
    vec![
        target(m, backend),
        entry_points(m, backend),
        shared_memory(m, backend),
        shuffles(m, backend),
        wide_loads(m, backend),
    ]
}

/// Every compiler's PTX declares the architecture it is assembled for (rust-cuda's libnvvm
/// 11.8 writes sm_80, which `cargo xtask ptx` raises: `catalog::ptx::raised_to_sm90`).
fn target(m: &Module, backend: Backend) -> Check {
    let want = sass::disasm::ARCH;
    let got = m.target.join(", ");
    let mut failures = Vec::new();
    if m.target.first().map(String::as_str) != Some(want) {
        failures.push(format!(".target is '{got}', expected '{want}'"));
    }
    if m.target.iter().any(|t| t == "debug") {
        failures.push(format!(
            "'.target {got}': ptxas compiles a debug target without optimization"
        ));
    }
    Check::new(backend, "ptx target", failures, format!(".target {got}"))
}

fn entry_points(m: &Module, backend: Backend) -> Check {
    let mut failures = Vec::new();
    let want = entry_points_of(backend);
    for e in &want {
        match m.entry(&e.name) {
            None => failures.push(format!("entry '{}' missing", e.name)),
            Some(f) if f.params.len() != e.params => failures.push(format!(
                "entry '{}' has {} parameters, the host passes {}",
                e.name,
                f.params.len(),
                e.params
            )),
            Some(_) => {}
        }
    }
    for f in m.entries() {
        if want.iter().any(|w| w.name == f.name) {
            continue;
        }
        let known = catalog::KERNELS
            .iter()
            .any(|k| k.entries().contains(&f.name));
        failures.push(if known {
            format!(
                "entry '{}' is in the {backend} PTX but the kernel catalogue \
                 (catalog/src/kernels/table.rs) does not list {backend} among its compilers: add it",
                f.name
            )
        } else {
            format!(
                "entry '{}' is not in the kernel catalogue (catalog/src/kernels/table.rs): add it \
                 with its launcher's parameter count",
                f.name
            )
        });
    }
    let detail = format!(
        "exactly the {} entry points the host launches on {backend}, with their parameter counts",
        want.len()
    );
    Check::new(backend, "entry points", failures, detail)
}

fn shared_memory(m: &Module, backend: Backend) -> Check {
    let mut failures = Vec::new();
    let mut total = (0, 0);
    for &name in SHARED_KERNELS {
        let Some(f) = m.entry(name) else {
            failures.push(format!("entry '{name}' missing"));
            continue;
        };
        let c = f.counts();
        total = (total.0 + c.shared_ld, total.1 + c.shared_st);
        if c.shared_ld == 0 || c.shared_st == 0 {
            failures.push(format!(
                "'{name}': {} ld.shared, {} st.shared (expected both)",
                c.shared_ld, c.shared_st
            ));
        }
        if c.generic_ld + c.generic_st > 0 {
            failures.push(format!(
                "'{name}': {} generic ld, {} generic st (expected ld.shared/st.shared)",
                c.generic_ld, c.generic_st
            ));
        }
        let to_generic = f
            .insts()
            .filter(|i| i.opcode.starts_with("cvta.shared"))
            .count();
        if to_generic > 0 {
            failures.push(format!(
                "'{name}': {to_generic} cvta.shared (shared address made generic)"
            ));
        }
    }
    let detail = format!(
        "v1-v5 and tiled/padded transposes: {} ld.shared, {} st.shared, no generic ld/st",
        total.0, total.1
    );
    Check::new(backend, "shared memory", failures, detail)
}

fn shuffles(m: &Module, backend: Backend) -> Check {
    let kernels = [
        "reduce_v5_f32",
        "reduce_v5_i32",
        "reduce_v6_f32",
        "reduce_v6_i32",
    ];
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for name in kernels {
        let n = m.entry(name).map_or(0, |f| {
            f.insts()
                .filter(|i| i.opcode.starts_with("shfl.sync"))
                .count()
        });
        if n == 0 {
            failures.push(format!("'{name}': no shfl.sync"));
        }
        found.push(format!("{name} {n}"));
    }
    let detail = format!("shfl.sync count: {}", found.join(", "));
    Check::new(backend, "warp shuffles", failures, detail)
}

fn wide_loads(m: &Module, backend: Backend) -> Check {
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for name in ["reduce_v6_f32", "reduce_v6_i32"] {
        let wide: Vec<&str> = m
            .entry(name)
            .map(|f| {
                f.insts()
                    .filter(|i| {
                        matches!(
                            ptx::classify(&i.opcode),
                            InstClass::Global {
                                load: true,
                                bits: 128
                            }
                        ) && i.opcode.contains(".v4.")
                    })
                    .map(|i| i.opcode.as_str())
                    .collect()
            })
            .unwrap_or_default();
        match wide.first() {
            None => failures.push(format!("'{name}': no 16-byte ld.global…v4")),
            Some(op) => found.push(format!("{name} {}× {op}", wide.len())),
        }
    }
    Check::new(backend, "16-byte loads", failures, found.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util;

    /// A module with every entry point in its expected shape, from which each test breaks one.
    fn good(target: &str) -> String {
        good_for(target, Backend::Llvm)
    }

    /// [`good`] with exactly the entries `backend` carries.
    fn good_for(target: &str, backend: Backend) -> String {
        let mut s = format!(".version 7.8\n.target {target}\n.address_size 64\n");
        for Entry { name, params } in entry_points_of(backend) {
            let name = name.as_str();
            s += &format!(".visible .entry {name}(\n");
            for p in 0..params {
                let sep = if p + 1 < params { "," } else { "" };
                s += &format!("\t.param .u64 {name}_param_{p}{sep}\n");
            }
            s += ")\n{\n";
            if SHARED_KERNELS.contains(&name) {
                s += "\tst.shared.b32 [%rd1], %r1;\n\tld.shared.b32 %r2, [%rd1+4];\n";
            }
            if name.starts_with("reduce_v5") || name.starts_with("reduce_v6") {
                s += "\tshfl.sync.down.b32 %r3, %r2, 16, 31, -1;\n";
            }
            if name.starts_with("reduce_v6") {
                s += "\tld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%rd2];\n";
            }
            s += "\tret;\n}\n";
        }
        s
    }

    fn failing(text: &str, backend: Backend) -> Vec<String> {
        check_module(&Module::parse(text), backend)
            .into_iter()
            .filter(|c| !c.ok)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect()
    }

    #[test]
    fn a_good_module_passes() {
        assert_eq!(failing(&good("sm_90"), Backend::Llvm), Vec::<String>::new());
        assert_eq!(
            failing(&good_for("sm_90", Backend::Nvvm), Backend::Nvvm),
            Vec::<String>::new()
        );
        assert_eq!(
            failing(&good_for("sm_90", Backend::Nvcc), Backend::Nvcc),
            Vec::<String>::new()
        );
    }

    /// Entries the Rust compilers carry and nvcc does not.
    fn rust_only() -> Vec<String> {
        catalog::KERNELS
            .iter()
            .filter(|k| k.carried_by(Backend::Llvm) && !k.carried_by(Backend::Nvcc))
            .flat_map(|k| k.entries())
            .collect()
    }

    #[test]
    fn the_rust_only_kernels_are_required_of_rust_and_refused_of_nvcc() {
        let rust_only = rust_only();
        assert!(!rust_only.is_empty());
        let nvcc = good_for("sm_90", Backend::Nvcc);
        let f = failing(&nvcc, Backend::Llvm);
        for name in &rust_only {
            assert!(
                f.iter().any(|f| f.contains(&format!("'{name}' missing"))),
                "{name}: {f:?}"
            );
        }
        let f = failing(&good("sm_90"), Backend::Nvcc);
        for name in &rust_only {
            assert!(
                f.iter().any(|f| f.contains(&format!(
                    "'{name}' is in the nvcc PTX but the kernel catalogue"
                ))),
                "{name}: {f:?}"
            );
        }
    }

    #[test]
    fn an_entry_the_catalogue_lacks_fails() {
        let text =
            good("sm_90") + ".visible .entry reduce_v99_f32(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";
        let f = failing(&text, Backend::Llvm);
        assert!(
            f.iter()
                .any(|f| f.contains("'reduce_v99_f32' is not in the kernel catalogue")),
            "{f:?}"
        );
    }

    #[test]
    fn wrong_or_debug_target_fails() {
        let f = failing(&good("sm_80"), Backend::Llvm);
        assert!(f[0].contains("expected 'sm_90'"), "{f:?}");
        let f = failing(&good("sm_90, debug"), Backend::Llvm);
        assert!(f[0].contains("without optimization"), "{f:?}");
        // libnvvm's PTX as it wrote it, not raised: its cluster kernels would not assemble.
        let f = failing(&good_for("sm_80", Backend::Nvvm), Backend::Nvvm);
        assert!(f[0].contains("expected 'sm_90'"), "{f:?}");
    }

    #[test]
    fn missing_entry_or_wrong_param_count_fails() {
        let text = good("sm_90").replace(".entry bump(", ".entry bump2(");
        assert!(
            failing(&text, Backend::Llvm)
                .iter()
                .any(|f| f.contains("'bump' missing"))
        );
        let text = good("sm_90").replace("\t.param .u64 transpose_naive_f32_param_3\n", "");
        let text = text.replace(
            "transpose_naive_f32_param_2,",
            "transpose_naive_f32_param_2",
        );
        let f = failing(&text, Backend::Llvm);
        assert!(
            f.iter()
                .any(|f| f.contains("'transpose_naive_f32' has 3 parameters")),
            "{f:?}"
        );
    }

    #[test]
    fn generic_shared_access_fails() {
        let text = good("sm_90").replacen("st.shared.b32 [%rd1]", "st.b32 [%rd1]", 1);
        let f = failing(&text, Backend::Llvm);
        assert!(
            f.iter()
                .any(|f| f.contains("'reduce_v1_f32'") && f.contains("generic st")),
            "{f:?}"
        );
    }

    #[test]
    fn missing_shuffle_or_wide_load_fails() {
        let text = good("sm_90").replace("shfl.sync.down.b32", "mov.b32");
        assert!(
            failing(&text, Backend::Llvm)
                .iter()
                .any(|f| f.contains("no shfl.sync"))
        );
        let text = good("sm_90").replace("ld.global.v4.b32", "ld.global.b32");
        assert!(
            failing(&text, Backend::Llvm)
                .iter()
                .any(|f| f.contains("no 16-byte"))
        );
    }

    #[test]
    fn a_missing_file_names_the_command_that_builds_it() {
        let e = read(Path::new("/nonexistent/gpu_kernels.ptx"), Backend::Nvvm).unwrap_err();
        assert!(
            format!("{e:#}").contains("run cargo xtask ptx --backend nvvm"),
            "{e:#}"
        );
    }

    /// The real PTX, as built by `cargo xtask ptx`: fails (never skips) when it is absent.
    fn check_real(backend: Backend) {
        let path = util::root().join(catalog::ptx::path(backend));
        let m = read(&path, backend).unwrap_or_else(|e| panic!("{e:#}"));
        let failed: Vec<String> = check_module(&m, backend)
            .iter()
            .filter(|c| c.fails())
            .map(ToString::to_string)
            .collect();
        assert!(
            failed.is_empty(),
            "{}:\n{}",
            path.display(),
            failed.join("\n")
        );
    }

    #[test]
    fn llvm_ptx_passes() {
        check_real(Backend::Llvm);
    }

    #[test]
    fn nvvm_ptx_passes() {
        check_real(Backend::Nvvm);
    }

    #[test]
    fn nvcc_ptx_passes() {
        check_real(Backend::Nvcc);
    }
}
