//! The row-wise family's checks (`gpu-kernels/src/rows.rs`): what its speed on the H200 rests
//! on, and what a change to the kernels loses silently.

use super::super::ptxcheck::Check;
use super::blocks_by_registers;
use super::report::KernelStats;
use catalog::kernels::{KERNELS, Shape};
use catalog::launch::rows::CLUSTER_VECTORS;
use catalog::rows::{DTYPES, Op, Schedule, largest_block};
use catalog::{Backend, Dtype};
use sass::control::{Dep, schedule};
use sass::{Sass, disasm, ptx};

/// Whether `name` is an entry point of the pair schedule.
pub fn pair(name: &str) -> bool {
    row_entries().any(|(n, _, s, _)| s == Schedule::Pair && n == name)
}

/// Each row kernel's PTX entry in the catalogue, with its operation, schedule and element
/// type.
fn row_entries() -> impl Iterator<Item = (String, Op, Schedule, Dtype)> {
    KERNELS.iter().flat_map(|k| {
        let rows = match k.shape {
            Shape::Rows { op, schedule } => Some((op, schedule)),
            _ => None,
        };
        rows.into_iter()
            .flat_map(move |(op, s)| DTYPES.map(|d| (k.entry(d), op, s, d)))
    })
}

/// Every 16-byte global load of a row kernel (the row's, the weights') carries an L2 cache
/// policy (`ld.global….L2::cache_hint.v4`; the row `evict_last` in a block or a cluster,
/// `evict_normal` in a warp, the weights `evict_last`: `rows.rs`'s `load` says why): at least one such load, and no 16-byte global load without it.
pub fn row_loads_under_policy(backend: Backend, module: &ptx::Module) -> Check {
    let mut failures = Vec::new();
    let mut kernels = 0;
    for (name, ..) in row_entries() {
        let Some(f) = module.entry(&name) else {
            continue;
        };
        kernels += 1;
        let wide_loads = || {
            f.insts()
                .filter(|i| i.opcode.starts_with("ld.global") && i.opcode.contains(".v4."))
        };
        let hinted = wide_loads()
            .filter(|i| i.opcode.contains(".L2::cache_hint"))
            .count();
        let plain = wide_loads().count() - hinted;
        if hinted == 0 || plain > 0 {
            failures.push(format!(
                "{name}: {hinted} 16-byte loads under an L2 policy, {plain} without"
            ));
        }
    }
    if kernels == 0 {
        failures.push("no row kernel in the module".into());
    }
    let detail = format!(
        "{kernels} row kernels: every 16-byte global load under an L2 cache policy \
         (`.L2::cache_hint`)"
    );
    Check::new(backend, "row loads under the L2 policy", failures, detail)
}

/// The blocks an SM must hold of a row kernel's largest launch ([`largest_block`]), and that
/// launch's threads: two blocks of 1024 of the block schedule's lean kernels
/// ([`Op::block_is_lean`]), 1024 threads of every other block, wide, cluster and streamed
/// kernel (two blocks of 512, one of 1024, four of 256), and of the narrow warp's (blocks of
/// 64: what it is for, `launch::rows::NARROW_VECTORS`) every warp an SM holds, but for
/// LayerNorm's, whose two weights ride in registers beside the row
/// (`Group::WEIGHTS_WITH_ROW`: 40 registers) and leave 50 (25 blocks of 64). The warp
/// schedule has no such budget (LayerNorm's warp kernels take 64 registers, half the SM's
/// warps: measured faster than 34–44 with the weights loaded after the merge, docs/part2.md).
fn occupancy_wanted(op: Op, schedule: Schedule, dtype: Dtype) -> Option<(u32, u32)> {
    let threads_an_sm = match schedule {
        Schedule::Warp => return None,
        Schedule::Narrow if op.weights() >= 2 => 1600,
        Schedule::Narrow => 2048,
        Schedule::Block if op.block_is_lean() => 2048,
        _ => 1024,
    };
    let threads = largest_block(op, schedule, dtype);
    Some((threads, threads_an_sm / threads))
}

/// Each row kernel's registers let an SM hold the blocks its schedule is sized for
/// ([`occupancy_wanted`]): a register or two more than a budget halves the blocks an SM holds,
/// nothing loading while the one left merges and stores (e.g. LayerNorm's cluster at 70–72
/// registers, docs/part2.md).
pub fn row_registers(backend: Backend, rows: &[KernelStats]) -> Check {
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for (name, op, schedule, dtype) in row_entries() {
        let (Some(r), Some((threads, blocks))) = (
            rows.iter().find(|r| r.kernel == name),
            occupancy_wanted(op, schedule, dtype),
        ) else {
            continue;
        };
        let registers = r.resources.registers;
        let held = blocks_by_registers(registers, threads);
        if held < blocks {
            failures.push(format!(
                "{name}: {registers} registers hold {held} blocks of {threads} an SM, not {blocks}"
            ));
        }
        found.push(format!("{name} {registers}"));
    }
    if found.is_empty() {
        failures.push("no row kernel found".into());
    }
    let detail = format!(
        "registers within each schedule's blocks an SM: {}",
        found.join(", ")
    );
    Check::new(backend, "row kernels' occupancy", failures, detail)
}

/// A 16-byte global load that allocates in L1 (`LDG.E.128`, `LDG.E.128.CONSTANT`): a row's
/// vector, or on a cluster's first row a vector of its weights. Not `LDG.E.NA.128`, the
/// loads of LayerNorm's `b`, which are issued one or two vectors ahead of their use on
/// purpose (`rows.rs`'s `b_ahead`).
fn allocating_wide_load(opcode: &str) -> bool {
    let parts: Vec<&str> = opcode.split('.').collect();
    parts[0] == "LDG" && parts.contains(&"128") && !parts.contains(&"NA")
}

/// How many such loads `f` issues, run by run in the listing's order, before an instruction
/// waits on the result of one of them: what a thread has in flight at once, 16 bytes a
/// load. A run that ends at a store to shared memory (`STS`) is the copy of a cluster's kept
/// weights into it before the first row (`rows.rs`'s `keep_weights`), not a row, and is left
/// out. `None` where the listing has no control bits.
pub fn load_runs(f: &disasm::Function) -> Option<Vec<usize>> {
    let waits = schedule(f)?.waits;
    let mut runs = Vec::new();
    let mut run = 0;
    for l in &f.lines {
        let disasm::Line::Inst { addr, inst } = l else {
            continue;
        };
        let waits_on_load = waits.get(addr).is_some_and(|ws| {
            ws.iter()
                .flat_map(|w| &w.producers)
                .any(|p| p.dep == Dep::Result && allocating_wide_load(&p.opcode))
        });
        if waits_on_load && run > 0 {
            if !inst.opcode.starts_with("STS") {
                runs.push(run);
            }
            run = 0;
        }
        run += allocating_wide_load(&inst.opcode) as usize;
    }
    if run > 0 {
        runs.push(run);
    }
    Some(runs)
}

/// Whether every run of [`load_runs`] holds a cluster thread's `CLUSTER_VECTORS` row loads
/// (and there is one).
pub fn row_at_once(runs: &[usize]) -> bool {
    !runs.is_empty() && runs.iter().all(|&r| r >= CLUSTER_VECTORS as usize)
}

/// Each cluster kernel issues a thread's `CLUSTER_VECTORS` row loads before it waits on the
/// first (`rows.rs`'s `load`: one straight run, `Group::LOADS_IN_ONE_RUN`): 128 bytes a
/// thread in flight, what Little's law asks of the SM's two blocks at the copy's rate. Where
/// ptxas issues part of them after the first have landed, a row costs two DRAM round trips
/// instead of one: rust-cuda's RMSNorm f32 cluster without launch bounds issued 5, then 3, and
/// read 0.867 x copy at 256 x 262144 where rustc's read 0.958
/// (`catalog::rows::launch_bounds`).
pub fn cluster_loads_at_once(backend: Backend, sass: &Sass) -> Check {
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for (name, _, schedule, _) in row_entries() {
        let Some(f) = sass.function(&name).filter(|_| schedule.in_clusters()) else {
            continue;
        };
        let Some(runs) = load_runs(f) else {
            failures.push(format!("{name}: no control bits in the listing"));
            continue;
        };
        if !row_at_once(&runs) {
            failures.push(format!(
                "{name}: 16-byte loads issued in runs of {runs:?} before a wait, not {CLUSTER_VECTORS} at once"
            ));
        }
        found.push(format!("{name} {runs:?}"));
    }
    if found.is_empty() {
        failures.push("no cluster kernel found".into());
    }
    let detail = format!(
        "16-byte loads a thread issues before it waits on one, run by run: {}",
        found.join(", ")
    );
    Check::new(backend, "cluster row loads at once", failures, detail)
}
