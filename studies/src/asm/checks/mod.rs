//! `cargo xtask asm --check`: the PTX checks of `super::ptxcheck`, then the SASS checks that
//! protect what the chapter teaches, per backend:
//!
//! - v1, v2, v3 have the same shape: the same number of barriers (one after the load, one per
//!   tree level: 1 + 8), the same shared loads and stores, predicated shared loads (the `if`
//!   became predication, not a branch), instruction counts within [`SHAPE_MARGIN`];
//! - v5 is v4 with shuffles: v4's global loads (the coarsened load), fewer barriers and
//!   shared stores than v4 (its tree stops at 64 values), and [`WARP_SUM_SHUFFLES`] `shfl.sync`
//!   in the PTX;
//! - v6 has 16-byte global loads (`LDG.E.128`) and no shared tree: at most one shared store
//!   (its warp's slot), one shared load, one barrier;
//! - the padded transpose indexes its tile with a row pitch of 33 words, the tiled one 32;
//! - no kernel spills (ptxas: 0 bytes stack, spill stores, spill loads; no `LDL`/`STL`), but
//!   the fault catalogue's spill fault, whose fault that is;
//! - each fault of the catalogue is planted, and its twin fixed, in the SASS ([`PLANTED`]):
//!   FFMA and no HMMA in the FP32 GEMM, HMMA in the BF16 one, LDL/STL in the spill fault,
//!   LDGSTS + DEPBAR in both async kernels, MUFU.SIN in the SFU fault only, barriers in the
//!   barrier fault only; the occupancy fault's registers hold it to at most
//!   [`OCCUPANCY_FAULT_BLOCKS`] blocks per SM, its twin's allow all eight, the BF16 GEMM's
//!   two;
//! - every reduction's tree and warp-sum loops are fully unrolled;
//! - no kernel reaches shared memory through generic addressing: in the PTX, no generic
//!   `ld`/`st`/`atom` whose address comes from a `.shared` variable or a `cvta.shared`; in the
//!   SASS, no generic `LD`/`ST`/`ATOM`/`RED` in a kernel that uses shared memory;
//! - every 16-byte global load of a row kernel carries an L2 cache policy, and each row
//!   kernel's registers let an SM hold the blocks its schedule is sized for (`rows`).

use super::ptxcheck::{self, Check};
use super::report::{self, KernelStats};
use super::{Build, print_json};
use anyhow::{Result, bail};
use catalog::{Backend, Format};
use sass::counts::{Inst, InstClass, widths};
use sass::{Sass, ptx};
use std::collections::BTreeMap;

mod generic;
mod rows;

pub use generic::{generic_shared_accesses, shared_through_generic};
pub use rows::{load_runs, row_at_once};

/// How far apart v1, v2 and v3's SASS instruction counts may be: (max − min) / min. nvcc gives
/// 88 each (the chapter); with Rust, v2 carries one extra index computation per tree level
/// (`2·stride·tid`), which ptxas keeps as an `IMAD.SHL` + `LEA` pair.
pub const SHAPE_MARGIN: f64 = 0.20;
/// Barriers in v1–v4: one after the load into shared memory, one per level of the 256-tree.
pub const TREE_BARRIERS: usize = 1 + 8;
/// `shfl.sync` in one `warp_sum` (offsets 16, 8, 4, 2, 1).
pub const WARP_SUM_SHUFFLES: usize = 5;

/// Barriers each kernel's source executes (every thread, every time): the SASS should hold
/// exactly these. More means the compiler copied a barrier onto two branch paths, so lanes of
/// one warp can wait at different `bar.sync` instructions (`bar.sync` is
/// `barrier.sync.aligned`, which the PTX ISA leaves undefined when not every thread executes
/// the same instruction).
pub const BARRIERS_AS_WRITTEN: &[(&str, usize)] = &[
    ("reduce_v1", TREE_BARRIERS),
    ("reduce_v2", TREE_BARRIERS),
    ("reduce_v3", TREE_BARRIERS),
    ("reduce_v4", TREE_BARRIERS),
    // After the load and after levels 128 and 64; warp 0 does the rest in registers.
    ("reduce_v5", 1 + 2),
    ("reduce_v6", 1),
    ("transpose_tiled_f32", 1),
    ("transpose_padded_f32", 1),
];

/// SASS opcodes (an exact opcode, or its prefix before a `.`) each fault kernel must have, and
/// must not have: where the fault, or the fix, shows in the code ptxas made.
pub const PLANTED: &[(&str, &[&str], &[&str])] = &[
    ("tensor_cores_fault", &["FFMA"], &["HMMA"]),
    ("tensor_cores_fixed", &["HMMA"], &[]),
    ("spills_fault", &["LDL", "STL"], &[]),
    ("spills_fixed", &[], &["LDL", "STL"]),
    ("async_stages_fault", &["LDGSTS", "DEPBAR"], &[]),
    ("async_stages_fixed", &["LDGSTS", "DEPBAR"], &[]),
    ("sfu_fault", &["MUFU.SIN"], &[]),
    ("sfu_fixed", &["FFMA"], &["MUFU.SIN"]),
    ("barrier_fault", &["BAR"], &[]),
    ("barrier_fixed", &["SHFL"], &["BAR"]),
];

/// Blocks of 256 threads one SM holds at most with the occupancy fault's registers (25 % of
/// the SM's 64 warps); its twin's must allow all eight (the SM's 2048 threads).
pub const OCCUPANCY_FAULT_BLOCKS: u32 = 2;

/// Blocks of `threads` threads that the 64 Ki registers of an sm_90 SM hold at `registers`
/// per thread (allocated per warp, in units of 256 registers).
pub fn blocks_by_registers(registers: u32, threads: u32) -> u32 {
    let per_warp = (registers * 32).div_ceil(256) * 256;
    let warps = threads.div_ceil(32);
    65_536 / (per_warp.max(1) * warps)
}

/// Whether SASS `opcode` is `want` or starts with `want` and a `.`.
fn is_opcode(opcode: &str, want: &str) -> bool {
    opcode == want
        || opcode
            .strip_prefix(want)
            .is_some_and(|r| r.starts_with('.'))
}

/// Failures that are stated and explained: printed as
/// `known` with the reason, not failing the run. Remove an entry when its cause is fixed.
pub const KNOWN: &[(Backend, &str, &str)] = &[
    (
        Backend::Nvcc,
        "v1-v3 same shape",
        "nvcc merges the first level of v2 (`s[2t] + s[2t+1]`: adjacent words, the pair 8-byte \
         aligned) into one LDS.64, so v2 has 16 shared-load instructions for the same 17 \
         words; barriers (9 each) and instruction counts are within the margin",
    ),
    (
        Backend::Nvvm,
        "v1-v3 same shape",
        "libnvvm 11.8 compiles v3's `if tid < stride` levels as branches, not predication, and \
         gives the threads that dropped out a second ladder of barriers (each thread still executes \
         9; `results/asm/stats.txt` has the BAR counts); see docs/asm-walkthrough.md",
    ),
    (
        Backend::Nvvm,
        "barriers as written",
        "same cause, in v3, v4 and v5: libnvvm duplicates the tree's barrier onto the path of \
         the threads that dropped out; with aligned `bar.sync` that deadlocked on the H200, so \
         the nvvm device layer uses non-aligned `barrier.sync`, which ptxas expands into a \
         `BRA.DIV` test with an out-of-line WARPSYNC + BAR path; see docs/backends.md",
    ),
    (
        Backend::Nvvm,
        "pair spills",
        "the pair schedule (chosen for LayerNorm's longest rows, measured beside the cluster \
         everywhere) keeps a half's state past the 64 registers its blocks of two halves allow: \
         rust-cuda's RMSNorm bf16 and softmax bf16 pair kernels, neither chosen \
         (results/rows/b304f94/experiments, section 2); rustc's pair kernels spill nothing since \
         the pair reads its cluster rank again after the merge (results/rows/ee86824/experiments)",
    ),
    (
        Backend::Nvvm,
        "tree loops unrolled",
        "the trees are unrolled; the loops are ptxas's WARPSYNC + BAR sequence for the \
         non-aligned `barrier.sync` the nvvm device layer needs (see `barriers as written`)",
    ),
];

pub fn run(builds: &mut [Build], format: Format) -> Result<()> {
    let mut all = Vec::new();
    for b in builds.iter_mut() {
        all.extend(ptxcheck::check_module(&b.module, b.backend));
        let rows = report::collect(std::slice::from_mut(b), &["all".to_string()])?;
        let backend = b.backend;
        b.sass()?;
        let sass = b.sass.as_ref().expect("assembled above");
        all.extend(sass_checks(backend, &rows, &b.module, sass));
    }
    for c in &mut all {
        c.known = KNOWN
            .iter()
            .find(|(b, name, _)| *b == c.backend && *name == c.name)
            .map(|(_, _, why)| *why);
    }
    let failed = all.iter().filter(|c| c.fails()).count();
    if format == Format::Json {
        print_json("checks", &all)?;
    } else {
        for c in &all {
            println!("{c}");
        }
        let known = all.iter().filter(|c| !c.ok && c.known.is_some()).count();
        println!("{} checks, {failed} failed, {known} known", all.len());
    }
    if failed > 0 {
        bail!("{failed} of {} asm checks failed", all.len());
    }
    Ok(())
}

/// The SASS checks for one backend's rows (`--kernel all --stats`).
pub fn sass_checks(
    backend: Backend,
    rows: &[KernelStats],
    module: &ptx::Module,
    sass: &Sass,
) -> Vec<Check> {
    let by_name: BTreeMap<&str, &KernelStats> =
        rows.iter().map(|r| (r.kernel.as_str(), r)).collect();
    let get = |name: &str| by_name.get(name).copied();
    let mut checks = Vec::new();

    // v1, v2, v3: same shape.
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for t in ["f32", "i32"] {
        let names = ["v1", "v2", "v3"].map(|v| format!("reduce_{v}_{t}"));
        let Some(rs) = names.iter().map(|n| get(n)).collect::<Option<Vec<_>>>() else {
            failures.push(format!("reduce_v1..v3_{t} missing"));
            continue;
        };
        let bars: Vec<usize> = rs.iter().map(|r| r.sass.barriers).collect();
        let insts: Vec<usize> = rs.iter().map(|r| r.sass.total).collect();
        if bars.iter().any(|&b| b != TREE_BARRIERS) {
            failures.push(format!(
                "{t}: barriers {bars:?}, expected {TREE_BARRIERS} each"
            ));
        }
        let (lo, hi) = (*insts.iter().min().unwrap(), *insts.iter().max().unwrap());
        if (hi - lo) as f64 > SHAPE_MARGIN * lo as f64 {
            failures.push(format!(
                "{t}: instructions {insts:?} differ by more than {:.0}%",
                SHAPE_MARGIN * 100.0
            ));
        }
        let mem: Vec<(usize, usize)> = rs
            .iter()
            .map(|r| (r.sass.shared_ld, r.sass.shared_st))
            .collect();
        if mem.iter().any(|m| *m != mem[0]) {
            failures.push(format!("{t}: shared (loads, stores) {mem:?} differ"));
        }
        for r in &rs {
            if r.sass.shared_ld_predicated == 0 {
                failures.push(format!("{}: no predicated shared load", r.kernel));
            }
        }
        found.push(format!(
            "{t}: instructions {insts:?}, barriers {bars:?}, LDS/STS {mem:?}, predicated LDS {:?}",
            rs.iter()
                .map(|r| r.sass.shared_ld_predicated)
                .collect::<Vec<_>>()
        ));
    }
    checks.push(Check::new(
        backend,
        "v1-v3 same shape",
        failures,
        found.join("; "),
    ));

    // Barriers as written.
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for &(prefix, want) in BARRIERS_AS_WRITTEN {
        for r in rows.iter().filter(|r| super::matches(prefix, &r.kernel)) {
            if r.sass.barriers != want {
                failures.push(format!(
                    "{}: {} BAR, source executes {want}",
                    r.kernel, r.sass.barriers
                ));
            }
        }
        found.push(format!("{prefix} {want}"));
    }
    checks.push(Check::new(
        backend,
        "barriers as written",
        failures,
        found.join(", "),
    ));

    // v5: v4 plus shuffles.
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for t in ["f32", "i32"] {
        match (
            get(&format!("reduce_v4_{t}")),
            get(&format!("reduce_v5_{t}")),
        ) {
            (Some(v4), Some(v5)) => {
                failures.extend(
                    v5_against_v4(v4, v5)
                        .into_iter()
                        .map(|f| format!("{t}: {f}")),
                );
                found.push(format!(
                    "{t}: LDG {} as v4's, BAR {} → {}, STS {} → {}, PTX shfl.sync {}",
                    widths(&v5.sass.global_ld),
                    v4.sass.barriers,
                    v5.sass.barriers,
                    v4.sass.shared_st,
                    v5.sass.shared_st,
                    v5.ptx.shuffles
                ));
            }
            _ => failures.push(format!("reduce_v4/v5_{t} missing")),
        }
    }
    checks.push(Check::new(
        backend,
        "v5 = v4 + shuffles",
        failures,
        found.join("; "),
    ));

    // v6: wide loads, one shared slot per warp.
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for t in ["f32", "i32"] {
        let name = format!("reduce_v6_{t}");
        let Some(r) = get(&name) else {
            failures.push(format!("{name} missing"));
            continue;
        };
        let c = &r.sass;
        let wide = c.global_ld.get(&128).copied().unwrap_or(0);
        if wide == 0 {
            failures.push(format!("{name}: no LDG.E.128"));
        }
        if c.shared_st > 1 || c.shared_ld > 1 || c.barriers > 1 {
            failures.push(format!(
                "{name}: {} STS, {} LDS, {} BAR (expected ≤ 1 each: one slot per warp)",
                c.shared_st, c.shared_ld, c.barriers
            ));
        }
        found.push(format!(
            "{t}: {wide}× LDG.E.128, {} STS, {} LDS, {} BAR",
            c.shared_st, c.shared_ld, c.barriers
        ));
    }
    checks.push(Check::new(
        backend,
        "v6 wide loads, slot per warp",
        failures,
        found.join("; "),
    ));

    // Transposes: tile row pitch.
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for (name, want) in [("transpose_tiled_f32", 32), ("transpose_padded_f32", 33)] {
        let ptx_33 = module
            .entry(name)
            .map_or(0, |f| f.insts().filter(|i| ptx_times_33(i)).count());
        let sass_33 = sass
            .function(name)
            .map_or(0, |f| f.insts().filter(|i| sass_times_33(i)).count());
        let pitch = if ptx_33 > 0 && sass_33 > 0 {
            33
        } else if ptx_33 + sass_33 == 0 {
            32
        } else {
            0
        };
        if module.entry(name).is_none() {
            failures.push(format!("{name} missing"));
        } else if pitch != want {
            failures.push(format!(
                "{name}: expected pitch {want}; {ptx_33} PTX and {sass_33} SASS multiplies by 33"
            ));
        }
        found.push(format!(
            "{name}: pitch {pitch} ({ptx_33} PTX mul/mad and {sass_33} SASS IMAD by 33)"
        ));
    }
    checks.push(Check::new(
        backend,
        "transpose tile pitch",
        failures,
        found.join("; "),
    ));

    // No spills, but where spilling is the fault planted; the pair schedule's kernels on
    // their own (`pair spills`, a known failure on rust-cuda).
    let spill_fault = |name: &str| {
        catalog::kernels::find(name)
            .and_then(|k| k.fault)
            .is_some_and(|f| f.pair == catalog::kernels::Pair::Spills && !f.fixed)
    };
    for (name, pair, what) in [
        (
            "no spills",
            false,
            "kernels: 0 bytes stack and spills, no LDL/STL (the spill fault and the pair \
             schedule aside)",
        ),
        (
            "pair spills",
            true,
            "pair kernels: 0 bytes stack and spills, no LDL/STL",
        ),
    ] {
        let picked: Vec<&KernelStats> = rows
            .iter()
            .filter(|r| !spill_fault(&r.kernel) && rows::pair(&r.kernel) == pair)
            .collect();
        let mut failures = Vec::new();
        for r in &picked {
            let res = &r.resources;
            let local = r.sass.local_ld + r.sass.local_st;
            if res.stack + res.spill_stores + res.spill_loads > 0 || local > 0 {
                failures.push(format!(
                    "{}: stack {} B, spill stores {} B, spill loads {} B, {local} LDL/STL",
                    r.label(),
                    res.stack,
                    res.spill_stores,
                    res.spill_loads
                ));
            }
        }
        let detail = format!("{} {what}", picked.len());
        checks.push(Check::new(backend, name, failures, detail));
    }
    checks.push(faults_planted(backend, rows, sass));

    // Unrolled trees.
    let failures = rows
        .iter()
        .filter(|r| r.kernel.starts_with("reduce_") && !r.unrolled)
        .map(|r| format!("{}: a loop holds a barrier or shuffle", r.label()))
        .collect();
    let loops: Vec<String> = rows
        .iter()
        .filter(|r| r.sass.loops.count > 0)
        .map(|r| format!("{} {}", r.kernel, r.sass.loops.count))
        .collect();
    let detail = format!(
        "no loop holds a barrier or shuffle; loops left: {}",
        if loops.is_empty() {
            "none".into()
        } else {
            loops.join(", ")
        }
    );
    checks.push(Check::new(backend, "tree loops unrolled", failures, detail));
    checks.push(shared_through_generic(backend, module, sass));
    checks.push(rows::row_loads_under_policy(backend, module));
    checks.push(rows::row_registers(backend, rows));
    checks.push(rows::cluster_loads_at_once(backend, sass));
    checks
}

/// Whether a kernel's registers allow the blocks per SM its plant needs.
type BlocksAllowed = fn(u32) -> bool;

/// The kernels whose register count is part of what the pair plants, and the blocks per SM
/// it must allow: the occupancy fault few, its twin all eight; the BF16 GEMM two (at most 128
/// registers), as the FP32 GEMM it fixes gets.
const REGISTER_PLANTS: [(&str, BlocksAllowed); 3] = [
    ("occupancy_fault", |blocks| blocks <= OCCUPANCY_FAULT_BLOCKS),
    ("occupancy_fixed", |blocks| blocks >= 8),
    ("tensor_cores_fixed", |blocks| blocks >= 2),
];

/// Each fault kernel's SASS against [`PLANTED`], and the registers of `REGISTER_PLANTS`,
/// on a backend that carries them (the Rust compilers).
pub fn faults_planted(backend: Backend, rows: &[KernelStats], sass: &Sass) -> Check {
    let carried = |name: &str| catalog::kernels::find(name).is_some_and(|k| k.carried_by(backend));
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for &(name, have, lack) in PLANTED.iter().filter(|(name, ..)| carried(name)) {
        let Some(f) = sass.function(name) else {
            failures.push(format!("{name} missing"));
            continue;
        };
        let count = |op: &str| f.insts().filter(|i| is_opcode(&i.opcode, op)).count();
        for &op in have {
            if count(op) == 0 {
                failures.push(format!("{name}: no {op}"));
            }
        }
        for &op in lack {
            if count(op) > 0 {
                failures.push(format!("{name}: {} {op}", count(op)));
            }
        }
        let shown: Vec<String> = have
            .iter()
            .chain(lack)
            .map(|op| format!("{op} {}", count(op)))
            .collect();
        found.push(format!("{name}: {}", shown.join(", ")));
    }
    for &(name, ok) in REGISTER_PLANTS.iter().filter(|(name, _)| carried(name)) {
        let Some(r) = rows.iter().find(|r| r.kernel == name) else {
            failures.push(format!("{name} missing"));
            continue;
        };
        let threads = catalog::kernels::find(name).map_or(256, |k| k.block.0 * k.block.1);
        let blocks = blocks_by_registers(r.resources.registers, threads);
        if !ok(blocks) {
            failures.push(format!(
                "{name}: {} registers hold {blocks} blocks per SM",
                r.resources.registers
            ));
        }
        found.push(format!(
            "{name}: {} registers, {blocks} blocks per SM",
            r.resources.registers
        ));
    }
    if found.is_empty() {
        found.push(format!("no fault kernel in the {backend} PTX"));
    }
    Check::new(backend, "faults planted", failures, found.join("; "))
}

/// What keeps v5 "v4 plus shuffles": v4's global loads, a shorter shared tree (fewer barriers
/// and shared stores), and one warp sum's shuffles in the PTX (ptxas may copy them onto a
/// second path, as for nvvm, so the SASS count is not pinned).
fn v5_against_v4(v4: &KernelStats, v5: &KernelStats) -> Vec<String> {
    let mut failures = Vec::new();
    if v5.sass.global_ld != v4.sass.global_ld {
        failures.push(format!(
            "v5 loads {}, v4 {} (expected v4's coarsened load)",
            widths(&v5.sass.global_ld),
            widths(&v4.sass.global_ld)
        ));
    }
    if v5.sass.barriers >= v4.sass.barriers || v5.sass.shared_st >= v4.sass.shared_st {
        failures.push(format!(
            "v5 {} BAR, {} STS; v4 {}, {} (expected fewer: the tree stops at 64 values)",
            v5.sass.barriers, v5.sass.shared_st, v4.sass.barriers, v4.sass.shared_st
        ));
    }
    if v5.ptx.shuffles != WARP_SUM_SHUFFLES {
        failures.push(format!(
            "v5 {} shfl.sync in the PTX, expected {WARP_SUM_SHUFFLES}",
            v5.ptx.shuffles
        ));
    }
    failures
}

/// `mad.lo.s32 %r16, %r2, 33, %r1` / `mul.lo.s32 %r12, %r1, 33` / `mul.wide.u32 %rd61, %r2, 33`:
/// an index scaled by the padded pitch.
fn ptx_times_33(i: &Inst) -> bool {
    (i.opcode.starts_with("mul.") || i.opcode.starts_with("mad."))
        && matches!(ptx::classify(&i.opcode), InstClass::Int)
        && i.operands.split(',').any(|o| o.trim() == "33")
}

/// `IMAD R7, R3, 0x21, R2`: the same in SASS.
fn sass_times_33(i: &Inst) -> bool {
    i.opcode.starts_with("IMAD") && i.operands.split(',').any(|o| o.trim() == "0x21")
}

#[cfg(test)]
mod tests;
