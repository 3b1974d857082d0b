//! `--stats`: tables for the selected kernels, SASS (counts and resources, then the rest of
//! the instruction mix) then PTX (also the rows `--diff` compares).

use super::Build;
use crate::util;
use anyhow::{Result, bail};
use catalog::{Backend, Format};
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets::ASCII_MARKDOWN};
use sass::counts::{Counts, widths};
use sass::disasm::{self, Peak, Resources};
use serde::Serialize;

/// Everything `--stats` knows about one kernel from one backend.
#[derive(Debug, Clone, Serialize)]
pub struct KernelStats {
    pub kernel: String,
    pub backend: Backend,
    /// The PTX file's name where two files are read side by side ([`Build::file`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub ptx: Counts,
    pub sass: Counts,
    /// From `ptxas -v`.
    pub resources: Resources,
    /// The most registers live at one instruction (nvdisasm's life ranges); `None` where
    /// nvdisasm could not count them.
    pub live_peak: Option<Peak>,
    /// No loop left in the SASS holds a barrier or a shuffle: the tree and warp-sum loops
    /// were fully unrolled (v6's grid-stride loop is a loop by design and holds neither).
    pub unrolled: bool,
    /// The fixed stall cycles the SASS schedules, each instruction counted once (its control
    /// bits, [`sass::control`]).
    pub stall_cycles: u32,
}

impl KernelStats {
    pub fn label(&self) -> String {
        label(&self.kernel, self.backend, self.file.as_deref())
    }
}

/// `reduce_v3_f32 [llvm]`; `bump [llvm: before.ptx]` where two PTX files of one compiler are
/// read side by side ([`Build::file`]).
pub fn label(kernel: &str, backend: Backend, file: Option<&str>) -> String {
    match file {
        Some(f) => format!("{kernel} [{backend}: {f}]"),
        None => format!("{kernel} [{backend}]"),
    }
}

pub fn kernel_stats(b: &mut Build, name: &str) -> Result<KernelStats> {
    let ptx = match b.module.entry(name) {
        Some(f) => f.counts(),
        None => bail!("no kernel '{name}' in the {} PTX", b.backend),
    };
    let (backend, file) = (b.backend, b.file.clone());
    let s = b.sass()?;
    let Some(f) = s.function(name) else {
        bail!("'{name}' is missing from the {backend} SASS");
    };
    let sass = f.counts();
    let live_peak = f.peak();
    let stall_cycles = sass::control::stall_cycles(f);
    Ok(KernelStats {
        file,
        live_peak,
        stall_cycles,
        kernel: name.to_string(),
        backend,
        unrolled: sass.loops.with_sync == 0,
        ptx,
        sass,
        resources: s.resources.get(name).copied().unwrap_or_default(),
    })
}

/// Rows for the `--kernel` patterns: kernels in PTX order, each followed by its other-backend
/// row so the two compilers sit side by side.
pub fn collect(builds: &mut [Build], patterns: &[String]) -> Result<Vec<KernelStats>> {
    let mut order: Vec<String> = Vec::new();
    for b in builds.iter() {
        for k in b.kernels(patterns) {
            if !order.contains(&k) {
                order.push(k);
            }
        }
    }
    let mut rows = Vec::new();
    for k in &order {
        for b in builds.iter_mut() {
            if b.module.entry(k).is_some() {
                rows.push(kernel_stats(b, k)?);
            }
        }
    }
    Ok(rows)
}

#[derive(Serialize)]
struct Meta {
    command: String,
    date: String,
    commit: String,
    ptxas: String,
    nvdisasm: String,
    /// What the PTX files were assembled for ([`disasm::arch`] of each one's target).
    arch: String,
    ptx: Vec<(Backend, String, String)>,
}

fn meta(builds: &[Build]) -> Meta {
    let root = util::root();
    let version = |tool| {
        util::cuda_tool(tool)
            .map(|p| util::tool_version(&p))
            .unwrap_or_else(|_| "not found".into())
    };
    Meta {
        command: format!(
            "cargo xtask {}",
            std::env::args().skip(1).collect::<Vec<_>>().join(" ")
        ),
        date: util::now_utc(),
        commit: util::git_commit(&root),
        ptxas: version("ptxas"),
        nvdisasm: version("nvdisasm"),
        arch: {
            let mut archs: Vec<&str> = builds
                .iter()
                .map(|b| disasm::arch(&b.module.target))
                .collect();
            archs.sort();
            archs.dedup();
            archs.join(", ")
        },
        ptx: builds
            .iter()
            .map(|b| {
                let path = b.ptx_path.strip_prefix(&root).unwrap_or(&b.ptx_path);
                (
                    b.backend,
                    path.display().to_string(),
                    b.module.target.join(", "),
                )
            })
            .collect(),
    }
}

pub fn stats(builds: &mut [Build], patterns: &[String], format: Format) -> Result<()> {
    let rows = collect(builds, patterns)?;
    let meta = meta(builds);
    match format {
        Format::Json => {
            let doc = serde_json::json!({
                "schema_version": super::SCHEMA_VERSION,
                "meta": meta,
                "kernels": rows,
            });
            println!("{}", serde_json::to_string_pretty(&doc)?);
            return Ok(());
        }
        Format::Csv => return print_csv(&rows),
        Format::Table => {}
    }
    println!("# {}", meta.command);
    println!("# date {} · commit {}", meta.date, meta.commit);
    println!(
        "# ptxas -arch={} -lineinfo -v: {} · nvdisasm: {}",
        meta.arch, meta.ptxas, meta.nvdisasm
    );
    for (backend, path, target) in &meta.ptx {
        println!("# {backend} PTX: {path} (.target {target})");
    }
    println!(
        "\nSASS ({}), per kernel, from ptxas + nvdisasm:\n",
        meta.arch
    );
    println!("{}", sass_table(&rows));
    println!(
        "\nSASS, the rest of the instruction mix (with the class columns above, every \
         instruction counted once):\n"
    );
    println!("{}", mix_table(&rows));
    println!("\nPTX, per kernel:\n");
    println!("{}", ptx_table(&rows));
    println!("\n{LEGEND}");
    Ok(())
}

/// One CSV row per kernel and backend: SASS counts, resources, PTX counts.
fn print_csv(rows: &[KernelStats]) -> Result<()> {
    let mut w = csv::Writer::from_writer(std::io::stdout());
    let counts = |c: &Counts| {
        vec![
            c.total.to_string(),
            c.shared_ld.to_string(),
            c.shared_ld_predicated.to_string(),
            c.shared_st.to_string(),
            widths(&c.global_ld),
            widths(&c.global_st),
            (c.local_ld + c.local_st).to_string(),
            (c.generic_ld + c.generic_st).to_string(),
            c.barriers.to_string(),
            c.shuffles.to_string(),
            c.atomics.to_string(),
            c.branches.to_string(),
            c.predicated.to_string(),
            c.loops.count.to_string(),
        ]
        .into_iter()
        .chain(c.remaining_classes().map(|(_, n)| n.to_string()))
        .collect::<Vec<_>>()
    };
    let names = [
        "insts",
        "shared_ld",
        "shared_ld_predicated",
        "shared_st",
        "global_ld",
        "global_st",
        "local",
        "generic",
        "barriers",
        "shuffles",
        "atomics",
        "branches",
        "predicated",
        "loops",
    ]
    .map(String::from)
    .into_iter()
    .chain(
        Counts::default()
            .remaining_classes()
            .map(|(k, _)| k.replace('/', "_").to_lowercase()),
    )
    .collect::<Vec<_>>();
    let mut header = vec!["kernel".to_string(), "backend".to_string()];
    header.extend(names.iter().map(|n| format!("sass_{n}")));
    header.extend(
        [
            "registers",
            "live_peak",
            "smem",
            "stack",
            "spill_stores",
            "spill_loads",
            "unrolled",
            "stall_cycles",
        ]
        .map(String::from),
    );
    header.extend(names.iter().map(|n| format!("ptx_{n}")));
    w.write_record(&header)?;
    for r in rows {
        let res = &r.resources;
        let mut rec = vec![r.kernel.clone(), r.backend.to_string()];
        rec.extend(counts(&r.sass));
        rec.extend(
            [
                res.registers.to_string(),
                r.live_peak.map_or(String::new(), |p| p.gpr.to_string()),
            ]
            .into_iter()
            .chain([res.smem, res.stack, res.spill_stores, res.spill_loads].map(|v| v.to_string())),
        );
        rec.push(r.unrolled.to_string());
        rec.push(r.stall_cycles.to_string());
        rec.extend(counts(&r.ptx));
        w.write_record(&rec)?;
    }
    w.flush()?;
    Ok(())
}

const LEGEND: &str = "\
insts: instructions up to the last EXIT (the trailing BRA-to-self and NOP padding excluded).
LDG/STG, ld.global/st.global: count × access width. BAR: barrier instructions in the code (a
barrier duplicated on two branch paths counts twice). pred: instructions under a predicate
guard (@P0). loops: backward branches left after unrolling; \"with sync\" when a loop holds a
barrier or a shuffle. unrolled: no such loop (tree and warp-sum loops fully unrolled).
regs/smem/stack/spill: from ptxas -v (smem is static shared memory; these kernels size theirs
at launch). stall: the stall cycles the control bits schedule, each instruction counted once.
live: the most registers live at any one instruction (nvdisasm --life-range-mode count; `asm --live` lists them per instruction); regs is what ptxas allocates, which can be
more. generic: ld/st without a state space. Mix: int (integer and address arithmetic,
compares), fp, cvt (conversions), mov (moves, IMAD.MOV, SEL), const/SR (constant bank and
special registers: LDC, ULDC, S2R), pred (predicate logic), ctrl (EXIT, BSSY/BSYNC, WARPSYNC,
NOP), vote (VOTE, MATCH, REDUX), fence (MEMBAR, FENCE); uniform-datapath forms (UIADD3, UMOV)
count with their class.";

pub(super) fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    for i in 1..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

fn sass_table(rows: &[KernelStats]) -> Table {
    let mut t = table(&[
        "kernel",
        "insts",
        "LDS",
        "STS",
        "LDG",
        "STG",
        "BAR",
        "SHFL",
        "ATOM/RED",
        "BRA",
        "pred",
        "loops",
        "unrolled",
        "regs",
        "live",
        "smem",
        "stack",
        "spill st/ld",
        "stall",
    ]);
    for r in rows {
        let (c, res) = (&r.sass, &r.resources);
        t.add_row(vec![
            Cell::new(r.label()),
            Cell::new(c.total),
            Cell::new(c.shared_ld),
            Cell::new(c.shared_st),
            Cell::new(widths(&c.global_ld)),
            Cell::new(widths(&c.global_st)),
            Cell::new(c.barriers),
            Cell::new(c.shuffles),
            Cell::new(c.atomics),
            Cell::new(c.branches),
            Cell::new(c.predicated),
            Cell::new(c.loops),
            Cell::new(if r.unrolled { "yes" } else { "no" }),
            Cell::new(res.registers),
            Cell::new(r.live_peak.map_or("-".into(), |p| p.gpr.to_string())),
            Cell::new(res.smem),
            Cell::new(res.stack),
            Cell::new(format!("{}/{}", res.spill_stores, res.spill_loads)),
            Cell::new(r.stall_cycles),
        ]);
    }
    t
}

/// The classes [`sass_table`] does not show, per kernel.
fn mix_table(rows: &[KernelStats]) -> Table {
    let classes = Counts::default().remaining_classes().map(|(k, _)| k);
    let mut header = vec!["kernel", "insts"];
    header.extend(classes);
    let mut t = table(&header);
    for r in rows {
        let mut row = vec![Cell::new(r.label()), Cell::new(r.sass.total)];
        row.extend(
            r.sass
                .remaining_classes()
                .into_iter()
                .map(|(_, n)| Cell::new(n)),
        );
        t.add_row(row);
    }
    t
}

fn ptx_table(rows: &[KernelStats]) -> Table {
    let mut t = table(&[
        "kernel",
        "insts",
        "ld.shared",
        "st.shared",
        "ld.global",
        "st.global",
        "generic",
        "bar",
        "shfl",
        "atom/red",
        "bra",
        "pred",
        "loops",
    ]);
    for r in rows {
        let c = &r.ptx;
        t.add_row(vec![
            Cell::new(r.label()),
            Cell::new(c.total),
            Cell::new(c.shared_ld),
            Cell::new(c.shared_st),
            Cell::new(widths(&c.global_ld)),
            Cell::new(widths(&c.global_st)),
            Cell::new(c.generic_ld + c.generic_st),
            Cell::new(c.barriers),
            Cell::new(c.shuffles),
            Cell::new(c.atomics),
            Cell::new(c.branches),
            Cell::new(c.predicated),
            Cell::new(c.loops),
        ]);
    }
    t
}

/// All metrics of a row, SASS first, for the diff.
pub(super) fn metrics(r: &KernelStats) -> Vec<(String, String)> {
    let mut m: Vec<(String, String)> = r
        .sass
        .metrics()
        .into_iter()
        .map(|(k, v)| (format!("SASS {k}"), v))
        .collect();
    let res = &r.resources;
    m.push(("registers".into(), res.registers.to_string()));
    m.push((
        "peak live registers".into(),
        r.live_peak.map_or("-".into(), |p| p.gpr.to_string()),
    ));
    m.push(("stack".into(), res.stack.to_string()));
    m.push((
        "spill stores/loads".into(),
        format!("{}/{}", res.spill_stores, res.spill_loads),
    ));
    m.push(("unrolled".into(), r.unrolled.to_string()));
    m.push(("SASS stall cycles".into(), r.stall_cycles.to_string()));
    m.extend(
        r.ptx
            .metrics()
            .into_iter()
            .map(|(k, v)| (format!("PTX {k}"), v)),
    );
    m
}
