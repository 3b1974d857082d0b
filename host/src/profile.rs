//! Profile mode (`lab run`): each selected kernel launched exactly once, for ncu and nsys.
//!
//! A profiler replays or traces every launch it sees, so a benchmark loop is the wrong thing
//! to profile. For every (kernel, backend) this module
//!
//! 1. fills the inputs (random, seeded) and computes the CPU reference,
//! 2. launches once untimed inside the NVTX range [`WARMUP_RANGE`] (module JIT, lazy loading
//!    and first-touch costs land here, not in the profiled launch),
//! 3. resets the output outside any range,
//! 4. launches exactly once inside the push/pop range [`PROFILE_RANGE`] of the lab's NVTX
//!    domain, and waits for it,
//! 5. copies the result back and checks it against the CPU reference (`ok` / `FAILED`).
//!
//! ncu selects step 4 with `--nvtx --nvtx-include "kernel-lab@profile/"` ([`NVTX_FILTER`]);
//! when one kernel on one backend is run, `--kernel-name <entry> --launch-skip 1
//! --launch-count 1` selects the same launch without NVTX.
//!
//! CUB's `DeviceReduce::Sum` (`cub`, `cub_i32`) runs the same way when the binary links it
//! (`bench::cub`); it is one launch whatever `--backend` says (it is not compiled from Rust),
//! and ncu sees CUB's own kernels (typically two: tiles, then a single-block finish).
//!
//! Adding a kernel: a [`Kernel`] variant, its names in [`Kernel::name`]/[`Kernel::entry`], a
//! line in [`Kernel::every`], and an arm in [`run_one`] that launches it like the others.

use crate::bench::cub::{self, CubElem, CubSum};
use crate::bench::verify::{self, SumRef};
use crate::cpu;
use crate::error::{Ctx, HostError, Result};
use crate::files::write_atomic;
use crate::kernels::{Backend, Elem, LaunchConfig, Variant, Version};
use crate::lab::Lab;
use crate::nvtx;
use crate::placement::{Placement, ResultSlots, SlotChoice};
use cust::context::CurrentContext;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};

/// NVTX push/pop range around the one profiled launch of each kernel.
pub const PROFILE_RANGE: &str = "profile";
/// NVTX push/pop range around the untimed warm-up launch (never profiled).
pub const WARMUP_RANGE: &str = "warmup";
/// ncu's `--nvtx-include` filter that selects exactly the launches in [`PROFILE_RANGE`]:
/// domain `kernel-lab`, push/pop range `profile` (the trailing `/` means push/pop).
pub const NVTX_FILTER: &str = "kernel-lab@profile/";

/// Default element count of the reductions and `bump` (2^24: ncu's replays stay short).
pub const DEFAULT_N: u64 = 1 << 24;
/// Default transpose shape, rows = cols.
pub const DEFAULT_EDGE: u32 = 4096;

/// Element type of a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Ty {
    F32,
    I32,
}

/// One kernel `lab run` can launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Kernel {
    Reduce(Version, Ty),
    Transpose(Variant),
    /// The launch-gap demo kernel.
    Bump,
    /// `copy_stream_f32` over the transposes' matrix: the copy ceiling as a kernel ncu can see.
    CopyStream,
    /// CUB's `DeviceReduce::Sum`, the reference (when the binary links it).
    Cub(Ty),
}

impl Kernel {
    /// Every kernel: the order `all` runs them in, then the i32 reductions, `bump`, CUB.
    pub fn every() -> Vec<Kernel> {
        let mut k: Vec<Kernel> = Version::ALL
            .iter()
            .map(|&v| Kernel::Reduce(v, Ty::F32))
            .collect();
        k.extend(Variant::ALL.iter().map(|&v| Kernel::Transpose(v)));
        k.extend(Version::ALL.iter().map(|&v| Kernel::Reduce(v, Ty::I32)));
        k.extend([
            Kernel::Bump,
            Kernel::CopyStream,
            Kernel::Cub(Ty::F32),
            Kernel::Cub(Ty::I32),
        ]);
        k
    }

    /// The name users type and tables show: `reduce_v3` (f32), `reduce_v3_i32`,
    /// `transpose_tiled`, `bump`, `cub`.
    pub fn name(self) -> String {
        match self {
            Kernel::Reduce(v, Ty::F32) => v.name().to_string(),
            Kernel::Reduce(v, Ty::I32) => format!("{}_i32", v.name()),
            Kernel::Transpose(v) => v.name().to_string(),
            Kernel::Bump => "bump".to_string(),
            Kernel::CopyStream => "copy_stream".to_string(),
            Kernel::Cub(Ty::F32) => "cub".to_string(),
            Kernel::Cub(Ty::I32) => "cub_i32".to_string(),
        }
    }

    /// The PTX entry point, which is also the kernel name ncu and nsys report (CUB: the
    /// library call; ncu reports CUB's own kernel names).
    pub fn entry(self) -> String {
        match self {
            Kernel::Reduce(v, Ty::F32) => v.entry::<f32>(),
            Kernel::Reduce(v, Ty::I32) => v.entry::<i32>(),
            Kernel::Transpose(v) => v.entry(),
            Kernel::Bump => "bump".to_string(),
            Kernel::CopyStream => "copy_stream_f32".to_string(),
            Kernel::Cub(_) => CUB_ENTRY.to_string(),
        }
    }

    /// `reduction`, `transpose` or `bump`.
    pub fn family(self) -> &'static str {
        match self {
            Kernel::Reduce(..) | Kernel::Cub(_) => "reduction",
            Kernel::Transpose(_) | Kernel::CopyStream => "transpose",
            Kernel::Bump => "bump",
        }
    }

    /// What a name means: the kernel's own name, or its PTX entry (`reduce_v3_f32`).
    fn matches(self, name: &str) -> bool {
        name == self.name() || name == self.entry()
    }
}

/// What [`Kernel::entry`] says for CUB.
pub const CUB_ENTRY: &str = "cub::DeviceReduce::Sum";

/// Names `--kernel` accepts besides the kernels' own.
pub const GROUPS: [(&str, &str); 3] = [
    (
        "all",
        "every f32 reduction (and cub, when built in), every transpose",
    ),
    ("reductions", "every reduce_v* (f32), and cub when built in"),
    ("transposes", "every transpose_*"),
];

/// Every name `--kernel` accepts, groups first.
pub fn valid_names() -> Vec<String> {
    GROUPS
        .iter()
        .map(|(g, _)| g.to_string())
        .chain(Kernel::every().into_iter().map(Kernel::name))
        .collect()
}

/// Resolves `reduce_v3,transpose_tiled`, `all`, `reductions` or `transposes` into kernels,
/// in the order given, without duplicates. A name that matches nothing is an error that
/// lists the valid names.
pub fn select(spec: &str) -> Result<Vec<Kernel>> {
    let mut out: Vec<Kernel> = Vec::new();
    let mut push = |k: Kernel| {
        if !out.contains(&k) {
            out.push(k);
        }
    };
    for name in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        // CUB joins the groups only when this binary links it; `cub` by name says why not.
        let with_cub = cub::unavailable().is_none().then_some(Kernel::Cub(Ty::F32));
        let reductions = || {
            Version::ALL
                .into_iter()
                .map(|v| Kernel::Reduce(v, Ty::F32))
                .chain(with_cub)
        };
        let transposes = || Variant::ALL.into_iter().map(Kernel::Transpose);
        match name {
            "all" => reductions().chain(transposes()).for_each(&mut push),
            "reductions" => reductions().for_each(&mut push),
            "transposes" => transposes().for_each(&mut push),
            _ => match Kernel::every().into_iter().find(|k| k.matches(name)) {
                Some(k) => push(k),
                None => {
                    return Err(HostError::Invalid {
                        what: "--kernel",
                        detail: format!(
                            "'{name}' matches no kernel; valid names: {}",
                            valid_names().join(", ")
                        ),
                    });
                }
            },
        }
    }
    if out.is_empty() {
        return Err(HostError::Invalid {
            what: "--kernel",
            detail: format!("no kernel named; valid names: {}", valid_names().join(", ")),
        });
    }
    Ok(out)
}

/// Which compilers' PTX to launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    Llvm,
    Nvvm,
    /// The CUDA C++ twins, compiled by nvcc.
    Nvcc,
    /// Both Rust compilers.
    Both,
    /// Both Rust compilers and nvcc.
    All,
}

/// The backends `which` means.
pub fn backends(which: Which) -> Vec<Backend> {
    match which {
        Which::Llvm => vec![Backend::Llvm],
        Which::Nvvm => vec![Backend::Nvvm],
        Which::Nvcc => vec![Backend::Nvcc],
        Which::Both => Backend::RUST.to_vec(),
        Which::All => Backend::ALL.to_vec(),
    }
}

impl Kernel {
    /// Whether `backend`'s PTX has this kernel (CUB has no backend and always can run).
    fn on(self, backend: Backend) -> bool {
        let family = match self {
            Kernel::Reduce(v, _) => v.name(),
            Kernel::Transpose(v) => v.name(),
            Kernel::Bump | Kernel::CopyStream | Kernel::Cub(_) => return true,
        };
        backend.carries(family)
    }
}

/// Problem sizes of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Sizes {
    /// Elements of the reductions and of `bump`.
    pub n: u64,
    /// Transpose input rows and columns.
    pub rows: u32,
    pub cols: u32,
    /// Elements the reduction inputs start past a 16-byte boundary (0–3: misaligned starts).
    pub offset: u32,
}

impl Default for Sizes {
    fn default() -> Sizes {
        Sizes {
            n: DEFAULT_N,
            rows: DEFAULT_EDGE,
            cols: DEFAULT_EDGE,
            offset: 0,
        }
    }
}

/// One launch `lab run` will make, known before touching the GPU (`lab run --plan`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Planned {
    /// `reduce_v3 [llvm]`: how every table labels this launch.
    pub label: String,
    /// `reduce_v3`.
    pub kernel: String,
    /// `reduce_v3_f32`: the name ncu and nsys report.
    pub entry: String,
    pub family: &'static str,
    /// `llvm`, `nvvm`, `nvcc`; `cub` (None) for CUB's library call.
    #[serde(serialize_with = "backend_name")]
    pub backend: Option<Backend>,
    /// Elements the kernel processes (rows × cols for a transpose).
    pub elements: u64,
    #[serde(skip)]
    pub which: Kernel,
}

/// Backends appear in JSON as `llvm` / `nvvm` (`cub` for CUB), as in every table label.
fn backend_name<S: serde::Serializer>(
    b: &Option<Backend>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(b.map_or("cub", Backend::name))
}

/// Everything `lab run` will launch, in order.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Plan {
    pub sizes: Sizes,
    /// Backends this binary carries: `llvm`, `nvvm`, `nvcc`.
    pub backends_built: Vec<&'static str>,
    /// Notes about what was skipped and why.
    pub notes: Vec<String>,
    /// The NVTX filter that selects the profiled launches.
    pub nvtx_filter: &'static str,
    pub launches: Vec<Planned>,
}

/// The launches for `kernels` × `which`, kernel by kernel, each on every chosen backend.
pub fn plan(kernels: &[Kernel], which: Which, sizes: Sizes) -> Result<Plan> {
    if sizes.n == 0 || sizes.rows == 0 || sizes.cols == 0 {
        return Err(HostError::Invalid {
            what: "size",
            detail: format!(
                "--size {} --rows {} --cols {}: every size must be at least 1",
                sizes.n, sizes.rows, sizes.cols
            ),
        });
    }
    if kernels.contains(&Kernel::Bump) && sizes.n > u32::MAX as u64 {
        return Err(HostError::TooLarge {
            what: "--size (bump)",
            value: sizes.n,
            limit: u32::MAX as u64,
            why: "bump's u32 index",
        });
    }
    let backends = backends(which);
    let mut notes = Vec::new();
    if let Some(why) = cub::unavailable() {
        notes.push(format!(
            "CUB is not in this binary ({why}): the groups leave it out"
        ));
    }
    let mut launches = Vec::new();
    let mut skipped = Vec::new();
    for &k in kernels {
        let elements = match k {
            Kernel::Transpose(_) | Kernel::CopyStream => sizes.rows as u64 * sizes.cols as u64,
            _ => sizes.n,
        };
        // CUB is not compiled from Rust: one launch, whatever the backends.
        let via: Vec<Option<Backend>> = match k {
            Kernel::Cub(_) => vec![None],
            _ => backends
                .iter()
                .copied()
                .filter(|&b| k.on(b))
                .map(Some)
                .collect(),
        };
        if backends.iter().any(|&b| !k.on(b)) {
            skipped.push(k.name());
        }
        for b in via {
            launches.push(Planned {
                label: format!("{} [{}]", k.name(), b.map_or("cub", Backend::name)),
                kernel: k.name(),
                entry: k.entry(),
                family: k.family(),
                backend: b,
                elements,
                which: k,
            });
        }
    }
    if !skipped.is_empty() {
        let why = format!(
            "{} {} no CUDA C++ twin (Rust-only kernels of issue 7)",
            skipped.join(", "),
            if skipped.len() == 1 { "has" } else { "have" }
        );
        if launches.is_empty() {
            return Err(HostError::Invalid {
                what: "--backend",
                detail: format!("{why}: use --backend llvm, nvvm or both"),
            });
        }
        notes.push(format!("{why}: not run on nvcc"));
    }
    Ok(Plan {
        sizes,
        backends_built: Backend::ALL.into_iter().map(Backend::name).collect(),
        notes,
        nvtx_filter: NVTX_FILTER,
        launches,
    })
}

impl Plan {
    /// Device bytes the planned launches hold at once, for refusing a size before any input
    /// is generated: each reduction element type's input (n + offset elements, shared by
    /// every launch of that type), the transposes' input and output matrices (shared by every
    /// transpose and the copy kernel), and `bump`'s own buffer. CUB's temporary storage (sized
    /// by CUB at run time, small next to its input) and the 4-byte results are left out.
    pub fn bytes_needed(&self) -> u64 {
        let has = |wanted: fn(Kernel) -> bool| self.launches.iter().any(|l| wanted(l.which));
        let s = self.sizes;
        let input = |elem: usize| (s.n.saturating_add(s.offset as u64)).saturating_mul(elem as u64);
        let mut bytes = 0u64;
        if has(|k| matches!(k, Kernel::Reduce(_, Ty::F32) | Kernel::Cub(Ty::F32))) {
            bytes = bytes.saturating_add(input(size_of::<f32>()));
        }
        if has(|k| matches!(k, Kernel::Reduce(_, Ty::I32) | Kernel::Cub(Ty::I32))) {
            bytes = bytes.saturating_add(input(size_of::<i32>()));
        }
        if has(|k| matches!(k, Kernel::Transpose(_) | Kernel::CopyStream)) {
            let matrix = (s.rows as u64 * s.cols as u64).saturating_mul(size_of::<f32>() as u64);
            bytes = bytes.saturating_add(matrix.saturating_mul(2));
        }
        if has(|k| k == Kernel::Bump) {
            bytes = bytes.saturating_add(s.n.saturating_mul(size_of::<f32>() as u64));
        }
        bytes
    }
}

/// What one profiled launch did, and whether its result was right.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Launched {
    /// What was planned (its fields appear at the top level of the manifest's JSON).
    #[serde(flatten)]
    pub planned: Planned,
    /// Grid, block and shared memory (None for CUB, which picks its own).
    pub config: Option<LaunchConfig>,
    /// The result matched the CPU reference.
    pub ok: bool,
    /// What was compared: values, error and bound.
    pub check: String,
}

impl Launched {
    /// `reduce_v3 [llvm]  grid 65536×1  block 256×1  smem 1024 B  ok (…)`.
    pub fn line(&self) -> String {
        let launch = match &self.config {
            Some(c) => format!(
                "grid {}×{}  block {}×{}  smem {} B",
                c.grid.0, c.grid.1, c.block.0, c.block.1, c.shared_bytes
            ),
            None => "launch chosen by the library".to_string(),
        };
        format!(
            "{:<24} {launch}  {} ({})",
            self.planned.label,
            if self.ok { "ok" } else { "FAILED" },
            self.check
        )
    }
}

/// Host inputs and their device copies, made once per run and shared by every kernel that
/// reads them.
#[derive(Default)]
struct Inputs {
    f32s: Option<(Vec<f32>, DeviceBuffer<f32>)>,
    i32s: Option<(Vec<i32>, DeviceBuffer<i32>)>,
    matrix: Option<(Vec<f32>, DeviceBuffer<f32>)>,
}

impl Inputs {
    /// The `rows × cols` matrix the transposes and the copy kernel read (made once per run),
    /// and a zeroed output of the same size.
    fn matrix(
        &mut self,
        sizes: Sizes,
        seed: u64,
    ) -> Result<(&[f32], &DeviceBuffer<f32>, DeviceBuffer<f32>)> {
        if self.matrix.is_none() {
            let n = sizes.rows as usize * sizes.cols as usize;
            self.matrix = Some(upload(cpu::random::f32s(n, seed ^ 0x7472_616e))?);
        }
        let (host, input) = self.matrix.as_ref().expect("filled above");
        let output = DeviceBuffer::from_slice(&vec![0.0f32; host.len()])
            .ctx(|| "allocating the output matrix".into())?;
        Ok((host, input, output))
    }
}

fn upload<T: Elem>(host: Vec<T>) -> Result<(Vec<T>, DeviceBuffer<T>)> {
    let dev = DeviceBuffer::from_slice(&host)
        .ctx(|| format!("uploading {} {} inputs", host.len(), T::NAME))?;
    Ok((host, dev))
}

/// Runs every planned launch (warm-up, reset, one profiled launch, verify), calling
/// `done` after each. Verification failures are reported in the results, not as errors.
/// The reductions add into `slots`' chosen word.
pub fn run(
    lab: &Lab,
    plan: &Plan,
    seed: u64,
    slots: &ResultSlots,
    mut done: impl FnMut(&Launched),
) -> Result<Vec<Launched>> {
    let mut inputs = Inputs::default();
    let mut out = Vec::new();
    for p in &plan.launches {
        let r = run_one(lab, p, plan.sizes, seed, &mut inputs, slots)?;
        done(&r);
        out.push(r);
    }
    Ok(out)
}

/// What [`warm_then_profile`] asks its caller to do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Restore the output (synchronously; the stream is idle).
    Reset,
    /// Queue one launch on the lab's stream.
    Launch,
}

/// Reset, warm-up launch, reset, then exactly one launch inside [`PROFILE_RANGE`].
fn warm_then_profile(lab: &Lab, mut step: impl FnMut(Step) -> Result<()>) -> Result<()> {
    for profiled in [false, true] {
        step(Step::Reset)?;
        // A copy from pageable memory may still be in flight when it returns, and the lab's
        // stream does not wait for the legacy stream: wait for the whole context.
        CurrentContext::synchronize().ctx(|| "waiting for the reset".into())?;
        let _r = nvtx::range(if profiled {
            PROFILE_RANGE
        } else {
            WARMUP_RANGE
        });
        step(Step::Launch)?;
        lab.sync()?;
    }
    Ok(())
}

fn run_one(
    lab: &Lab,
    p: &Planned,
    sizes: Sizes,
    seed: u64,
    inputs: &mut Inputs,
    slots: &ResultSlots,
) -> Result<Launched> {
    // Only CUB has no backend, and its arms do not read this.
    let backend = p.backend.unwrap_or(Backend::Llvm);
    let (config, ok, check) = match p.which {
        Kernel::Reduce(v, Ty::F32) => {
            if inputs.f32s.is_none() {
                let len = (sizes.n + sizes.offset as u64) as usize;
                inputs.f32s = Some(upload(cpu::random::f32s(len, seed))?);
            }
            let (host, dev) = inputs.f32s.as_ref().expect("filled above");
            let (host, dev) = (
                &host[sizes.offset as usize..],
                dev.index(sizes.offset as usize..),
            );
            let cfg = lab.reduce_config::<f32>(backend, v, sizes.n)?;
            let got = reduce_once(lab, backend, v, &dev, slots)?;
            let depth = v.addition_depth(sizes.n, cfg.grid.0 as u64);
            let check = verify::check_f32(got, &SumRef::f32(host), depth);
            (Some(cfg), check.is_ok(), check.unwrap_or_else(|e| e))
        }
        Kernel::Reduce(v, Ty::I32) => {
            if inputs.i32s.is_none() {
                inputs.i32s = Some(upload(cpu::random::i32s(
                    (sizes.n + sizes.offset as u64) as usize,
                    -1000,
                    1000,
                    seed,
                ))?);
            }
            let (host, dev) = inputs.i32s.as_ref().expect("filled above");
            let (host, dev) = (
                &host[sizes.offset as usize..],
                dev.index(sizes.offset as usize..),
            );
            let cfg = lab.reduce_config::<i32>(backend, v, sizes.n)?;
            let got = reduce_once(lab, backend, v, &dev, slots)?;
            let check = verify::check_i32(got, &SumRef::i32(host));
            (Some(cfg), check.is_ok(), check.unwrap_or_else(|e| e))
        }
        Kernel::Transpose(variant) => {
            let (rows, cols) = (sizes.rows, sizes.cols);
            let (host, input, output) = inputs.matrix(sizes, seed)?;
            let cfg = lab.transpose_config(variant, rows, cols)?;
            // Every output element is written, so there is nothing to reset.
            warm_then_profile(lab, |step| match step {
                Step::Reset => Ok(()),
                Step::Launch => {
                    lab.launch_transpose(backend, variant, input, &output, rows, cols, &lab.stream)
                }
            })?;
            let mut got = vec![0.0f32; host.len()];
            output
                .copy_to(&mut got[..])
                .ctx(|| "copying the transpose back".into())?;
            let want = cpu::transpose(host, rows as usize, cols as usize);
            let wrong = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            (
                Some(cfg),
                wrong == 0,
                format!("{rows}×{cols}, {wrong} elements differ from the CPU transpose"),
            )
        }
        Kernel::CopyStream => {
            let (rows, cols) = (sizes.rows, sizes.cols);
            let (host, input, output) = inputs.matrix(sizes, seed)?;
            let cfg = lab.copy_stream_config(backend, host.len() as u64)?;
            // Every element is written, so there is nothing to reset.
            warm_then_profile(lab, |step| match step {
                Step::Reset => Ok(()),
                Step::Launch => lab.launch_copy_stream(backend, input, &output, &lab.stream),
            })?;
            let mut got = vec![0.0f32; host.len()];
            output
                .copy_to(&mut got[..])
                .ctx(|| "copying the copy back".into())?;
            let wrong = got.iter().zip(host).filter(|(a, b)| a != b).count();
            (
                Some(cfg),
                wrong == 0,
                format!("{rows}×{cols}, {wrong} elements differ from the input"),
            )
        }
        Kernel::Bump => {
            let n = sizes.n as usize;
            let start = cpu::random::f32s(n, seed ^ 0x6275_6d70);
            let mut data = DeviceBuffer::from_slice(&start).ctx(|| "uploading bump data".into())?;
            let f = lab.function(backend, "bump")?;
            let cfg = LaunchConfig {
                grid: ((n as u32).div_ceil(256).max(1), 1),
                block: (256, 1),
                shared_bytes: 0,
            };
            // The reset makes the check see exactly one launch: data = start + 1.
            warm_then_profile(lab, |step| match step {
                Step::Reset => data
                    .copy_from(&start[..])
                    .ctx(|| "resetting bump data".into()),
                Step::Launch => lab.launch_bump(backend, &f, &data, &lab.stream),
            })?;
            let mut got = vec![0.0f32; n];
            data.copy_to(&mut got[..])
                .ctx(|| "copying bump data back".into())?;
            let wrong = got
                .iter()
                .zip(&start)
                .filter(|(g, s)| **g != **s + 1.0)
                .count();
            (
                Some(cfg),
                wrong == 0,
                format!("{wrong} of {n} elements are not start + 1"),
            )
        }
        Kernel::Cub(Ty::F32) => {
            if inputs.f32s.is_none() {
                inputs.f32s = Some(upload(cpu::random::f32s(sizes.n as usize, seed))?);
            }
            let (host, dev) = inputs.f32s.as_ref().expect("filled above");
            let got = cub_once(lab, dev, slots)?;
            let depth = verify::cub_depth(sizes.n, lab.info.sm_count);
            let checked = verify::check_f32(got, &SumRef::f32(host), depth);
            (None, checked.is_ok(), checked.unwrap_or_else(|e| e))
        }
        Kernel::Cub(Ty::I32) => {
            if inputs.i32s.is_none() {
                let x = cpu::random::i32s(sizes.n as usize, -1000, 1000, seed);
                inputs.i32s = Some(upload(x)?);
            }
            let (host, dev) = inputs.i32s.as_ref().expect("filled above");
            let got = cub_once(lab, dev, slots)?;
            let checked = verify::check_i32(got, &SumRef::i32(host));
            (None, checked.is_ok(), checked.unwrap_or_else(|e| e))
        }
    };
    Ok(Launched {
        planned: p.clone(),
        config,
        ok,
        check,
    })
}

/// CUB's sum: warm-up, then one profiled call. CUB overwrites the result; it is zeroed anyway,
/// so a call that wrote nothing cannot pass.
fn cub_once<T: CubElem>(lab: &Lab, input: &DeviceBuffer<T>, slots: &ResultSlots) -> Result<T> {
    let sum = CubSum::<T>::new(input.len() as u64)?;
    let mut out = slots.result::<T>();
    warm_then_profile(lab, |step| match step {
        Step::Reset => out
            .copy_from(&[T::default()][..])
            .ctx(|| "zeroing the result".into()),
        Step::Launch => sum.launch(input, &out, &lab.stream),
    })?;
    let mut r = [T::default()];
    out.copy_to(&mut r[..])
        .ctx(|| "copying the result back".into())?;
    Ok(r[0])
}

/// One reduction: warm-up, zero the result, one profiled launch, read the result.
fn reduce_once<T: Elem>(
    lab: &Lab,
    backend: Backend,
    v: Version,
    input: &DeviceSlice<T>,
    slots: &ResultSlots,
) -> Result<T> {
    let mut out = slots.result::<T>();
    // The kernels add to `out` with atomics: zero it before each launch.
    warm_then_profile(lab, |step| match step {
        Step::Reset => out
            .copy_from(&[T::default()][..])
            .ctx(|| "zeroing the result".into()),
        Step::Launch => lab.launch_reduce(backend, v, input, &out, &lab.stream),
    })?;
    let mut r = [T::default()];
    out.copy_to(&mut r[..])
        .ctx(|| "copying the result back".into())?;
    Ok(r[0])
}

/// `lab run --list`: the groups, then every kernel with its PTX entry.
pub fn names_help() -> String {
    let mut s = String::from("groups:\n");
    for (g, what) in GROUPS {
        s += &format!("  {g:<18} {what}\n");
    }
    s += "kernels (PTX entry in brackets):\n";
    for k in Kernel::every() {
        s += &format!("  {:<18} [{}]\n", k.name(), k.entry());
    }
    s
}

/// What `lab run` was asked to do (parsed by the binary's argument layer).
#[derive(Clone, Debug)]
pub struct Request {
    /// `--kernel`: names, comma-separated, or a group.
    pub kernels: String,
    pub which: Which,
    pub sizes: Sizes,
    pub seed: u64,
    /// Where the reductions' result word goes (`--placement`).
    pub placement: SlotChoice,
    /// `--plan`: print the plan as JSON, touch no GPU.
    pub plan_only: bool,
    /// `--manifest FILE`: write the launches and their checks as JSON.
    pub manifest: Option<std::path::PathBuf>,
}

/// The manifest `lab run --manifest` writes: the plan, then what each launch did.
#[derive(serde::Serialize)]
struct Manifest<'a> {
    device: &'a crate::lab::DeviceInfo,
    plan: &'a Plan,
    launches: &'a [Launched],
}

/// `lab run`: one line per launch on stdout. Returns whether every result was right.
pub fn run_cli(req: &Request) -> Result<bool> {
    let kernels = select(&req.kernels)?;
    let plan = plan(&kernels, req.which, req.sizes)?;
    if req.plan_only {
        let json = serde_json::to_string_pretty(&plan).expect("the plan serializes");
        println!("{json}");
        return Ok(true);
    }
    crate::lab::check_device_fits(plan.bytes_needed())?;
    let lab = Lab::new()?;
    for note in &plan.notes {
        eprintln!("note: {note}");
    }
    println!(
        "lab run: {} ({} SMs), reductions n = {}, transposes {}×{}; one warm-up, then one launch in NVTX range '{}'",
        lab.info.name,
        lab.info.sm_count,
        req.sizes.n,
        req.sizes.rows,
        req.sizes.cols,
        PROFILE_RANGE
    );
    let mut slots = ResultSlots::new()?;
    if req.placement != SlotChoice::First
        && plan
            .launches
            .iter()
            .any(|l| matches!(l.which, Kernel::Reduce(..) | Kernel::Cub(_)))
    {
        // Outside the NVTX range `profile`: ncu's default selection never sees these launches.
        let _r = nvtx::range("result word placement");
        slots.choose(&lab, req.placement)?;
        println!("{}", Placement::from(&slots).describe());
    }
    let launched = run(&lab, &plan, req.seed, &slots, |l| println!("{}", l.line()))?;
    if let Some(path) = &req.manifest {
        let m = Manifest {
            device: &lab.info,
            plan: &plan,
            launches: &launched,
        };
        let json = serde_json::to_string_pretty(&m).expect("the manifest serializes");
        write_atomic(path, json.as_bytes()).map_err(|e| HostError::Invalid {
            what: "--manifest",
            detail: format!("could not write '{}': {e}", path.display()),
        })?;
    }
    let failed = launched.iter().filter(|l| !l.ok).count();
    if failed > 0 {
        eprintln!(
            "error: {failed} of {} launches FAILED verification",
            launched.len()
        );
    }
    Ok(failed == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_groups_aliases_and_keep_order() {
        let k = select("reduce_v3,transpose_tiled,reduce_v3_f32").unwrap();
        assert_eq!(
            k,
            vec![
                Kernel::Reduce(Version::V3, Ty::F32),
                Kernel::Transpose(Variant::Tiled)
            ]
        );
        let (cub, v, t) = (
            cub::unavailable().is_none() as usize,
            Version::ALL.len(),
            Variant::ALL.len(),
        );
        assert_eq!(select("reductions").unwrap().len(), v + cub);
        assert_eq!(select("all").unwrap().len(), v + cub + t);
        assert_eq!(
            select("reduce_v6_i32").unwrap(),
            vec![Kernel::Reduce(Version::V6, Ty::I32)]
        );
        assert_eq!(select("bump").unwrap(), vec![Kernel::Bump]);
    }

    #[test]
    fn a_wrong_name_lists_the_valid_ones() {
        let e = select("reduce_v9").unwrap_err().to_string();
        assert!(e.contains("'reduce_v9'"), "{e}");
        assert!(e.contains("reduce_v3") && e.contains("transposes"), "{e}");
    }

    #[test]
    fn entries_are_the_ptx_names() {
        assert_eq!(
            Kernel::Reduce(Version::V1, Ty::F32).entry(),
            "reduce_v1_f32"
        );
        assert_eq!(
            Kernel::Transpose(Variant::Padded).entry(),
            "transpose_padded_f32"
        );
        assert_eq!(Kernel::Reduce(Version::V2, Ty::I32).name(), "reduce_v2_i32");
    }

    /// The manifest's launch objects keep the flat shape xtask reads (`launches.json`): the
    /// planned fields, then the outcome; the kernel enum itself is not written.
    #[test]
    fn launched_serializes_flat() {
        let k = select("reduce_v3").unwrap();
        let p = plan(&k, Which::Llvm, Sizes::default()).unwrap();
        let l = Launched {
            planned: p.launches[0].clone(),
            config: None,
            ok: true,
            check: "c".into(),
        };
        let v = serde_json::to_value(&l).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut want = [
            "label", "kernel", "entry", "family", "backend", "elements", "config", "ok", "check",
        ];
        want.sort();
        let mut got = keys.clone();
        got.sort();
        assert_eq!(got, want, "{v}");
        assert_eq!(v["label"], "reduce_v3 [llvm]");
        assert_eq!(v["backend"], "llvm");
        assert_eq!(v["entry"], "reduce_v3_f32");
        let text = serde_json::to_string(&l).unwrap();
        assert!(
            text.starts_with("{\"label\":\"reduce_v3 [llvm]\",\"kernel\""),
            "{text}"
        );
    }

    #[test]
    fn bytes_needed_counts_each_shared_input_once() {
        let sizes = Sizes {
            n: 1000,
            rows: 10,
            cols: 20,
            offset: 3,
        };
        let bytes = |spec: &str, which| {
            plan(&select(spec).unwrap(), which, sizes)
                .unwrap()
                .bytes_needed()
        };
        // Every f32 reduction reads the same input, on every backend.
        assert_eq!(bytes("reduce_v1", Which::Llvm), 1003 * 4);
        assert_eq!(bytes("reduce_v1,reduce_v3,reduce_v7", Which::All), 1003 * 4);
        // One input per element type.
        assert_eq!(bytes("reduce_v1,reduce_v1_i32", Which::Llvm), 2 * 1003 * 4);
        assert_eq!(bytes("cub,cub_i32", Which::Llvm), 2 * 1003 * 4);
        // The transposes and the copy kernel share one input and one output matrix.
        assert_eq!(
            bytes("transposes,copy_stream", Which::Both),
            2 * 10 * 20 * 4
        );
        assert_eq!(bytes("bump", Which::Llvm), 1000 * 4);
        assert_eq!(
            bytes("reduce_v3,reduce_v3_i32,transpose_naive,bump", Which::Llvm),
            2 * 1003 * 4 + 2 * 10 * 20 * 4 + 1000 * 4
        );
    }

    /// `lab run --kernel reduce_v1 --size 40000000000`: 160 GB, refused by the numbers alone.
    #[test]
    fn a_plan_past_the_free_memory_is_refused_with_the_numbers() {
        let sizes = Sizes {
            n: 40_000_000_000,
            ..Sizes::default()
        };
        let needed = plan(&select("reduce_v1").unwrap(), Which::Both, sizes)
            .unwrap()
            .bytes_needed();
        assert_eq!(needed, 160_000_000_000);
        let e = crate::lab::check_fits(needed, 140_000_000_000, 150_000_000_000)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("160000000000") && e.contains("140000000000 of 150000000000"),
            "{e}"
        );
        assert!(crate::lab::check_fits(needed, needed, needed).is_ok());
        // Sizes past u64 saturate instead of wrapping to a small number.
        let huge = Sizes {
            n: u64::MAX,
            rows: u32::MAX,
            cols: u32::MAX,
            offset: 3,
        };
        let all = plan(
            &select("reduce_v1,reduce_v1_i32,transpose_naive").unwrap(),
            Which::Llvm,
            huge,
        );
        assert_eq!(all.unwrap().bytes_needed(), u64::MAX);
    }

    #[test]
    fn nvcc_runs_the_chapter_kernels_and_refuses_the_rust_only_ones() {
        let labels = |p: &Plan| {
            p.launches
                .iter()
                .map(|l| l.label.clone())
                .collect::<Vec<_>>()
        };
        let k = select("reduce_v3,reduce_v7,transpose_v4").unwrap();
        let p = plan(&k, Which::All, Sizes::default()).unwrap();
        assert_eq!(
            labels(&p),
            [
                "reduce_v3 [llvm]",
                "reduce_v3 [nvvm]",
                "reduce_v3 [nvcc]",
                "reduce_v7 [llvm]",
                "reduce_v7 [nvvm]",
                "transpose_v4 [llvm]",
                "transpose_v4 [nvvm]"
            ]
        );
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("reduce_v7, transpose_v4 have no CUDA C++ twin")),
            "{:?}",
            p.notes
        );
        let e = plan(&k[1..], Which::Nvcc, Sizes::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no CUDA C++ twin") && e.contains("--backend llvm"),
            "{e}"
        );
    }
}
