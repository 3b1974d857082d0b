//! `lab run`: each selected kernel launched exactly once, for ncu and nsys.
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
//! CUB's `DeviceReduce::Sum` (`cub_reduce_sum`) runs the same way when the binary links it
//! (`bench::cub`); it is one launch whatever `--backend` says (it is not compiled from Rust),
//! and ncu sees CUB's own kernels (typically two: tiles, then a single-block finish).
//!
//! The kernels are the catalogue's ([`catalog::select`] resolves `--kernel`); a new catalogue
//! entry of a known family runs here without a change.

use crate::bench::cub::{self, CubElem, CubSum};
use crate::bench::verify::{self, SumRef};
use crate::cpu;
use crate::error::{Ctx, HostError, Result};
use crate::files::{report_written, write_atomic};
use crate::lab::Lab;
use crate::launchers::{Elem, addition_depth};
use crate::nvtx;
use crate::placement::{Placement, ResultSlots, SlotChoice};
use catalog::kernels::Selected;
pub use catalog::nvtx::{NVTX_FILTER, PROFILE_RANGE, WARMUP_RANGE};
pub use catalog::records::{Launched, Manifest, Plan, Planned, Sizes};
use catalog::{Backend, Dtype, Family, Kernel, Which};
use cust::context::CurrentContext;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};

/// Default element count of the reductions and `bump` (2^24: ncu's replays stay short).
pub const DEFAULT_N: u64 = 1 << 24;
/// Default transpose shape, rows = cols.
pub const DEFAULT_EDGE: u32 = 4096;
/// `fma_peak`'s trips per thread in `lab run` (one launch: a fraction of a millisecond).
const FMA_ITERS: u32 = 64;

/// The sizes when no flag changes them.
pub fn default_sizes() -> Sizes {
    Sizes {
        n: DEFAULT_N,
        rows: DEFAULT_EDGE,
        cols: DEFAULT_EDGE,
        offset: 0,
    }
}

/// One kernel `lab run` launches: a catalogue entry and its element type.
#[derive(Clone, Copy, Debug)]
pub struct RunKernel {
    pub kernel: &'static Kernel,
    pub dtype: Dtype,
}

impl PartialEq for RunKernel {
    fn eq(&self, o: &RunKernel) -> bool {
        self.kernel.name == o.kernel.name && self.dtype == o.dtype
    }
}

impl RunKernel {
    /// What a spec picked: the element type it named, else f32.
    fn of(s: Selected) -> RunKernel {
        RunKernel {
            kernel: s.kernel,
            dtype: s.dtype.unwrap_or(Dtype::F32),
        }
    }

    /// The name users type and tables show: `reduce_v3` (f32), `reduce_v3_i32`.
    pub fn name(self) -> String {
        if self.dtype == Dtype::F32 || self.kernel.dtypes.is_empty() {
            self.kernel.name.to_string()
        } else {
            format!("{}_{}", self.kernel.name, self.dtype.name())
        }
    }

    /// The PTX entry point, which is also the kernel name ncu and nsys report (CUB: the
    /// library call; ncu reports CUB's own kernel names).
    pub fn entry(self) -> String {
        match self.kernel.library {
            Some(call) => call.to_string(),
            None => self.kernel.entry(self.dtype),
        }
    }

    /// The manifest's family names: `reduction`, `transpose`, `ceiling`, `bump`.
    pub fn family(self) -> &'static str {
        match self.kernel.family {
            Family::Reduce => "reduction",
            Family::Transpose => "transpose",
            Family::Ceiling => "ceiling",
            Family::LaunchGap => "bump",
        }
    }

    /// Elements it processes.
    fn elements(self, s: Sizes) -> u64 {
        match self.kernel.family {
            Family::Transpose => s.rows as u64 * s.cols as u64,
            _ => s.n,
        }
    }

    /// The backends it runs on among `backends` (a library call: one launch, no backend).
    fn via(self, backends: &[Backend]) -> Vec<Option<Backend>> {
        if self.kernel.library.is_some() {
            return vec![None];
        }
        let carried = backends
            .iter()
            .copied()
            .filter(|&b| self.kernel.carried_by(b));
        carried.map(Some).collect()
    }
}

/// Resolves `--kernel` with the catalogue's rule ([`catalog::select`]), in the order given,
/// without duplicates. An item that picks several kernels (`all`, a family) leaves out the
/// library reduction when this binary does not link it; naming it still runs it (and fails
/// with the reason).
pub fn select(spec: &str) -> Result<Vec<RunKernel>> {
    catalog::select(spec).map_err(|detail| HostError::Invalid {
        what: "--kernel",
        detail,
    })?;
    let mut out: Vec<RunKernel> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let picked = catalog::select(item).expect("every item resolved above");
        let group = picked.len() > 1;
        for s in picked {
            let k = RunKernel::of(s);
            let linked = s.kernel.library.is_none() || cub::unavailable().is_none();
            if (linked || !group) && !out.contains(&k) {
                out.push(k);
            }
        }
    }
    Ok(out)
}

/// The plan: the launches for `kernels` × `which`, kernel by kernel, each on every chosen
/// backend that carries it.
pub fn plan(kernels: &[RunKernel], which: Which, sizes: Sizes) -> Result<Plan> {
    if sizes.n == 0 || sizes.rows == 0 || sizes.cols == 0 {
        return Err(HostError::Invalid {
            what: "size",
            detail: format!(
                "--size {} --rows {} --cols {}: every size must be at least 1",
                sizes.n, sizes.rows, sizes.cols
            ),
        });
    }
    if kernels.iter().any(|k| k.kernel.family == Family::LaunchGap) && sizes.n > u32::MAX as u64 {
        return Err(HostError::TooLarge {
            what: "--size (bump)",
            value: sizes.n,
            limit: u32::MAX as u64,
            why: "bump's u32 index",
        });
    }
    let backends = which.backends();
    let mut notes = Vec::new();
    if let Some(why) = cub::unavailable() {
        notes.push(format!(
            "CUB is not in this binary ({why}): the groups leave it out"
        ));
    }
    let mut launches = Vec::new();
    let mut skipped = Vec::new();
    for &k in kernels {
        let via = k.via(&backends);
        if k.kernel.library.is_none() && via.len() < backends.len() {
            skipped.push(k.name());
        }
        for b in via {
            let backend = b.map_or("cub", Backend::name);
            launches.push(Planned {
                label: format!("{} [{backend}]", k.name()),
                kernel: k.name(),
                entry: k.entry(),
                family: k.family().to_string(),
                backend: backend.to_string(),
                elements: k.elements(sizes),
            });
        }
    }
    if !skipped.is_empty() {
        let why = format!(
            "{} {} no CUDA C++ twin (Rust-only kernels)",
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
        backends_built: Backend::ALL.iter().map(|b| b.name().to_string()).collect(),
        notes,
        nvtx_filter: NVTX_FILTER.to_string(),
        launches,
    })
}

/// The kernel a planned launch runs, looked up again in the catalogue.
fn planned_kernel(p: &Planned) -> RunKernel {
    let s = catalog::select(&p.kernel).expect("a planned kernel is in the catalogue");
    RunKernel::of(s[0])
}

/// The backend a planned launch runs on (None: the library call).
fn planned_backend(p: &Planned) -> Option<Backend> {
    Backend::from_name(&p.backend)
}

/// Device bytes the planned launches hold at once, for refusing a size before any input is
/// generated: each element type's input (n + offset elements, shared by every reduction of
/// that type and the read stream), the transposes' input and output matrices (shared by every
/// transpose and the copy kernel), and `bump`'s own buffer. CUB's temporary storage (sized by
/// CUB at run time, small next to its input) and the 4-byte results are left out.
pub fn bytes_needed(plan: &Plan) -> u64 {
    let kernels: Vec<RunKernel> = plan.launches.iter().map(planned_kernel).collect();
    let has = |wanted: &dyn Fn(RunKernel) -> bool| kernels.iter().any(|&k| wanted(k));
    let s = plan.sizes;
    let input = (s.n.saturating_add(s.offset as u64)).saturating_mul(4);
    let mut bytes = 0u64;
    for d in Dtype::ALL {
        if has(&|k| uses_vector(k) && k.dtype == d) {
            bytes = bytes.saturating_add(input);
        }
    }
    if has(&|k| k.kernel.family == Family::Transpose) {
        let matrix = (s.rows as u64 * s.cols as u64).saturating_mul(4);
        bytes = bytes.saturating_add(matrix.saturating_mul(2));
    }
    if has(&|k| k.kernel.family == Family::LaunchGap) {
        bytes = bytes.saturating_add(s.n.saturating_mul(4));
    }
    bytes
}

/// Whether `k` reads the run's random vector of its element type (the reductions, CUB, the
/// read stream).
fn uses_vector(k: RunKernel) -> bool {
    k.kernel.family == Family::Reduce || is(k, crate::launchers::stream::read_stream())
}

fn is(k: RunKernel, kernel: &Kernel) -> bool {
    k.kernel.name == kernel.name
}

/// `reduce_v3 [llvm]  grid 65536×1  block 256×1  smem 1024 B  ok (…)`.
pub fn line(l: &Launched) -> String {
    let launch = match &l.config {
        Some(c) => format!(
            "grid {}×{}  block {}×{}  smem {} B",
            c.grid.0, c.grid.1, c.block.0, c.block.1, c.shared_bytes
        ),
        None => "launch chosen by the library".to_string(),
    };
    format!(
        "{:<24} {launch}  {} ({})",
        l.planned.label,
        if l.ok { "ok" } else { "FAILED" },
        l.check
    )
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
    /// The f32 vector (n + offset elements), made once per run.
    fn f32s(&mut self, sizes: Sizes, seed: u64) -> Result<&(Vec<f32>, DeviceBuffer<f32>)> {
        if self.f32s.is_none() {
            let len = (sizes.n + sizes.offset as u64) as usize;
            self.f32s = Some(upload(cpu::random::f32s(len, seed))?);
        }
        Ok(self.f32s.as_ref().expect("filled above"))
    }

    /// The i32 vector (n + offset elements in [-1000, 1000)), made once per run.
    fn i32s(&mut self, sizes: Sizes, seed: u64) -> Result<&(Vec<i32>, DeviceBuffer<i32>)> {
        if self.i32s.is_none() {
            let len = (sizes.n + sizes.offset as u64) as usize;
            self.i32s = Some(upload(cpu::random::i32s(len, -1000, 1000, seed))?);
        }
        Ok(self.i32s.as_ref().expect("filled above"))
    }

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

/// A launch's outcome: its configuration (None for the library call), whether the result was
/// right, and what was compared.
type Outcome = (Option<crate::launchers::LaunchConfig>, bool, String);

fn verdict(
    cfg: Option<crate::launchers::LaunchConfig>,
    v: std::result::Result<String, String>,
) -> Outcome {
    (cfg, v.is_ok(), v.unwrap_or_else(|e| e))
}

fn run_one(
    lab: &Lab,
    p: &Planned,
    sizes: Sizes,
    seed: u64,
    inputs: &mut Inputs,
    slots: &ResultSlots,
) -> Result<Launched> {
    let k = planned_kernel(p);
    // Only the library call has no backend, and its arm does not read this.
    let backend = planned_backend(p).unwrap_or(Backend::Llvm);
    let (config, ok, check) = match k.kernel.family {
        Family::Reduce => match k.dtype {
            Dtype::F32 => {
                let (host, dev) = inputs.f32s(sizes, seed)?;
                let off = sizes.offset as usize;
                let (host, dev) = (&host[off..], dev.index(off..));
                let (cfg, got) = reduce_once(lab, backend, k.kernel, &dev, slots)?;
                let depth = match cfg {
                    Some(c) => addition_depth(k.kernel, sizes.n, c.grid.0 as u64),
                    None => verify::cub_depth(sizes.n, lab.info.sm_count),
                };
                verdict(cfg, verify::check_f32(got, &SumRef::f32(host), depth))
            }
            Dtype::I32 => {
                let (host, dev) = inputs.i32s(sizes, seed)?;
                let off = sizes.offset as usize;
                let (host, dev) = (&host[off..], dev.index(off..));
                let (cfg, got) = reduce_once(lab, backend, k.kernel, &dev, slots)?;
                verdict(cfg, verify::check_i32(got, &SumRef::i32(host)))
            }
        },
        Family::Transpose => {
            let (rows, cols) = (sizes.rows, sizes.cols);
            let (host, input, output) = inputs.matrix(sizes, seed)?;
            let tiled = matches!(k.kernel.shape, catalog::Shape::Tiles { .. });
            let cfg = if tiled {
                lab.transpose_config(k.kernel, rows, cols)?
            } else {
                lab.copy_stream_config(backend, host.len() as u64)?
            };
            // Every output element is written, so there is nothing to reset.
            warm_then_profile(lab, |step| match step {
                Step::Reset => Ok(()),
                Step::Launch if tiled => {
                    lab.launch_transpose(backend, k.kernel, input, &output, rows, cols, &lab.stream)
                }
                Step::Launch => lab.launch_copy_stream(backend, input, &output, &lab.stream),
            })?;
            let mut got = vec![0.0f32; host.len()];
            output
                .copy_to(&mut got[..])
                .ctx(|| "copying the output back".into())?;
            let (want, what) = if tiled {
                (
                    cpu::transpose(host, rows as usize, cols as usize),
                    "the CPU transpose",
                )
            } else {
                (host.to_vec(), "the input")
            };
            let wrong = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            (
                Some(cfg),
                wrong == 0,
                format!("{rows}×{cols}, {wrong} elements differ from {what}"),
            )
        }
        Family::Ceiling => ceiling_once(lab, backend, k, sizes, seed, inputs)?,
        Family::LaunchGap => {
            let n = sizes.n as usize;
            let start = cpu::random::f32s(n, seed ^ 0x6275_6d70);
            let mut data = DeviceBuffer::from_slice(&start).ctx(|| "uploading bump data".into())?;
            let f = lab.function(backend, &k.entry())?;
            let cfg = lab.bump_config(backend, n as u64)?;
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
    };
    Ok(Launched {
        planned: p.clone(),
        config,
        ok,
        check,
    })
}

/// The ceilings, once: the read stream over the f32 vector (nothing may be stored), the FMA
/// peak (nothing may be stored).
fn ceiling_once(
    lab: &Lab,
    backend: Backend,
    k: RunKernel,
    sizes: Sizes,
    seed: u64,
    inputs: &mut Inputs,
) -> Result<Outcome> {
    // The output word starts zeroed before each launch; neither kernel may store into it.
    let out = DeviceBuffer::<u32>::zeroed(1).ctx(|| "allocating the output".into())?;
    let zero = || {
        // SAFETY: a stream-ordered memset of a live buffer that outlives the queue.
        unsafe { out.index(..).set_32_async(0, &lab.stream) }.ctx(|| "zeroing the output".into())
    };
    let cfg = if is(k, crate::launchers::stream::read_stream()) {
        let (_, dev) = inputs.f32s(sizes, seed)?;
        let input = dev.index(..sizes.n as usize);
        // The inputs are floats in [0, 1): no XOR of them has the sign bit set, so the
        // kernel never matches this sentinel and never stores.
        warm_then_profile(lab, |step| match step {
            Step::Reset => zero(),
            Step::Launch => lab.launch_read_stream(backend, &input, u32::MAX, &out, &lab.stream),
        })?;
        lab.read_stream_config(backend, sizes.n)?
    } else {
        let fma_out = DeviceBuffer::<f32>::zeroed(1).ctx(|| "allocating the output".into())?;
        warm_then_profile(lab, |step| match step {
            Step::Reset => Ok(()),
            Step::Launch => lab.launch_fma_peak(backend, FMA_ITERS, &fma_out, &lab.stream),
        })?;
        let mut got = [1f32];
        fma_out
            .copy_to(&mut got[..])
            .ctx(|| "copying the output back".into())?;
        if got[0] != 0.0 {
            return Ok(verdict(
                Some(lab.fma_peak_config(backend)?),
                Err(format!("the kernel stored {}", got[0])),
            ));
        }
        lab.fma_peak_config(backend)?
    };
    let mut got = [1u32];
    out.copy_to(&mut got[..])
        .ctx(|| "copying the output back".into())?;
    Ok(verdict(
        Some(cfg),
        if got[0] == 0 {
            Ok("no store".into())
        } else {
            Err(format!("the kernel stored {:#x}", got[0]))
        },
    ))
}

/// One reduction (the lab's kernel, or the library call when `kernel` is one): warm-up, reset
/// the result, one profiled launch, read the result. The library overwrites the result; it is
/// zeroed anyway, so a call that wrote nothing cannot pass.
fn reduce_once<T: CubElem>(
    lab: &Lab,
    backend: Backend,
    kernel: &Kernel,
    input: &DeviceSlice<T>,
    slots: &ResultSlots,
) -> Result<(Option<crate::launchers::LaunchConfig>, T)> {
    let n = input.len() as u64;
    let mut out = slots.result::<T>();
    let cub = match kernel.library {
        Some(_) => Some(CubSum::<T>::new(n)?),
        None => None,
    };
    let cfg = match cub {
        Some(_) => None,
        None => Some(lab.reduce_config::<T>(backend, kernel, n)?),
    };
    // The kernels add to `out` with atomics: zero it before each launch.
    warm_then_profile(lab, |step| match (step, &cub) {
        (Step::Reset, _) => out
            .copy_from(&[T::default()][..])
            .ctx(|| "zeroing the result".into()),
        (Step::Launch, Some(sum)) => sum.launch(input, &out, &lab.stream),
        (Step::Launch, None) => lab.launch_reduce(backend, kernel, input, &out, &lab.stream),
    })?;
    let mut r = [T::default()];
    out.copy_to(&mut r[..])
        .ctx(|| "copying the result back".into())?;
    Ok((cfg, r[0]))
}

/// `lab run --list`: the families, then every kernel with its PTX entry.
pub fn names_help() -> String {
    let mut s = String::from("groups:\n");
    s += &format!("  {:<18} every kernel\n", "all");
    for f in Family::ALL {
        let names: Vec<&str> = catalog::KERNELS
            .iter()
            .filter(|k| k.family == f)
            .map(|k| k.name)
            .collect();
        let mut g = f.name().to_string();
        for a in f.aliases() {
            g += &format!(", {a}");
        }
        s += &format!("  {g:<18} {}\n", names.join(", "));
    }
    s += "kernels (PTX entry in brackets):\n";
    for k in catalog::KERNELS {
        for &d in k.dtypes {
            let r = RunKernel {
                kernel: k,
                dtype: d,
            };
            s += &format!("  {:<18} [{}]\n", r.name(), r.entry());
        }
        if k.dtypes.is_empty() {
            s += &format!("  {:<18} [{}]\n", k.name, k.name);
        }
    }
    s
}

/// What `lab run` was asked to do (parsed by the binary's argument layer).
#[derive(Clone, Debug)]
pub struct Request {
    /// `--kernel`: names, families or unique parts of names, comma-separated.
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

/// `lab run`: one line per launch on stdout. Returns whether every result was right.
pub fn run_cli(req: &Request) -> Result<bool> {
    let kernels = select(&req.kernels)?;
    let plan = plan(&kernels, req.which, req.sizes)?;
    if req.plan_only {
        let json = serde_json::to_string_pretty(&plan).expect("the plan serializes");
        println!("{json}");
        return Ok(true);
    }
    crate::lab::check_device_fits(bytes_needed(&plan))?;
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
            .any(|l| planned_kernel(l).kernel.family == Family::Reduce)
    {
        // Outside the NVTX range `profile`: ncu's default selection never sees these launches.
        let _r = nvtx::range("result word placement");
        slots.choose(&lab, req.placement)?;
        println!("{}", Placement::from(&slots).describe());
    }
    let launched = run(&lab, &plan, req.seed, &slots, |l| println!("{}", line(l)))?;
    if let Some(path) = &req.manifest {
        let m = Manifest {
            device: lab.info.clone(),
            plan: plan.clone(),
            launches: launched.clone(),
        };
        let json = serde_json::to_string_pretty(&m).expect("the manifest serializes");
        write_atomic(path, json.as_bytes()).map_err(|e| HostError::Invalid {
            what: "--manifest",
            detail: format!("could not write '{}': {e}", path.display()),
        })?;
        report_written(path);
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

    fn names(spec: &str) -> Vec<String> {
        select(spec)
            .unwrap()
            .into_iter()
            .map(RunKernel::name)
            .collect()
    }

    /// The kernels no C++ twin carries.
    fn rust_only() -> Vec<&'static str> {
        catalog::KERNELS
            .iter()
            .filter(|k| k.library.is_none() && !k.carried_by(Backend::Nvcc))
            .map(|k| k.name)
            .collect()
    }

    #[test]
    fn names_resolve_families_entries_and_keep_order() {
        assert_eq!(
            names("reduce_v3,transpose_tiled,reduce_v3_f32"),
            ["reduce_v3", "transpose_tiled"]
        );
        assert_eq!(names("reduce_v6_i32"), ["reduce_v6_i32"]);
        assert_eq!(names("v3"), ["reduce_v3"]);
        assert_eq!(names("bump"), ["bump"]);
        let cub = cub::unavailable().is_none() as usize;
        let reductions = crate::launchers::reductions().count();
        assert_eq!(select("reductions").unwrap().len(), reductions + cub);
        assert_eq!(
            select("all").unwrap().len(),
            catalog::KERNELS.len() - 1 + cub
        );
        assert_eq!(names("cub"), ["cub_reduce_sum"]);
    }

    #[test]
    fn a_wrong_name_lists_the_valid_ones() {
        let e = select("reduce_v9").unwrap_err().to_string();
        assert!(e.contains("'reduce_v9'"), "{e}");
        assert!(e.contains("reduce_v3") && e.contains("transpose"), "{e}");
    }

    #[test]
    fn entries_are_the_ptx_names() {
        let k = |spec| select(spec).unwrap()[0];
        assert_eq!(k("reduce_v1").entry(), "reduce_v1_f32");
        assert_eq!(k("transpose_padded").entry(), "transpose_padded_f32");
        assert_eq!(k("reduce_v2_i32").name(), "reduce_v2_i32");
        assert_eq!(k("cub_reduce_sum").entry(), "cub::DeviceReduce::Sum");
    }

    /// The manifest's launch objects keep the flat shape xtask reads (`launches.json`): the
    /// planned fields, then the outcome.
    #[test]
    fn launched_serializes_flat() {
        let k = select("reduce_v3").unwrap();
        let p = plan(&k, Which::Llvm, default_sizes()).unwrap();
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
        assert_eq!(v["family"], "reduction");
        let text = serde_json::to_string(&l).unwrap();
        assert!(
            text.starts_with("{\"label\":\"reduce_v3 [llvm]\",\"kernel\""),
            "{text}"
        );
        let back: Launched = serde_json::from_str(&text).unwrap();
        assert_eq!(back, l);
    }

    #[test]
    fn the_plan_json_keeps_its_shape() {
        let p = plan(&select("reduce_v1").unwrap(), Which::Llvm, default_sizes()).unwrap();
        let text = serde_json::to_string(&p).unwrap();
        assert!(
            text.starts_with(
                "{\"sizes\":{\"n\":16777216,\"rows\":4096,\"cols\":4096,\"offset\":0},\
                 \"backends_built\":[\"llvm\",\"nvvm\",\"nvcc\"],\"notes\":["
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "\"nvtx_filter\":\"kernel-lab@profile/\",\"launches\":[{\"label\":\"reduce_v1 [llvm]\",\
                 \"kernel\":\"reduce_v1\",\"entry\":\"reduce_v1_f32\",\"family\":\"reduction\",\
                 \"backend\":\"llvm\",\"elements\":16777216}]}"
            ),
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
        let bytes =
            |spec: &str, which| bytes_needed(&plan(&select(spec).unwrap(), which, sizes).unwrap());
        // Every f32 reduction reads the same input, on every backend.
        assert_eq!(bytes("reduce_v1", Which::Llvm), 1003 * 4);
        assert_eq!(bytes("reduce", Which::All), 1003 * 4);
        // One input per element type.
        assert_eq!(bytes("reduce_v1,reduce_v1_i32", Which::Llvm), 2 * 1003 * 4);
        assert_eq!(
            bytes("cub_reduce_sum,cub_reduce_sum_i32", Which::Llvm),
            2 * 1003 * 4
        );
        // The transposes and the copy kernel share one input and one output matrix.
        assert_eq!(bytes("transposes", Which::Both), 2 * 10 * 20 * 4);
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
            ..default_sizes()
        };
        let needed =
            bytes_needed(&plan(&select("reduce_v1").unwrap(), Which::Both, sizes).unwrap());
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
        assert_eq!(bytes_needed(&all.unwrap()), u64::MAX);
    }

    #[test]
    fn nvcc_runs_the_twinned_kernels_and_refuses_the_rust_only_ones() {
        let only = rust_only();
        assert!(!only.is_empty());
        let spec = format!("reduce_v3,{}", only.join(","));
        let k = select(&spec).unwrap();
        let p = plan(&k, Which::All, default_sizes()).unwrap();
        let labels: Vec<String> = p.launches.iter().map(|l| l.label.clone()).collect();
        let mut want = vec![
            "reduce_v3 [llvm]".to_string(),
            "reduce_v3 [nvvm]".into(),
            "reduce_v3 [nvcc]".into(),
        ];
        for n in &only {
            want.push(format!("{n} [llvm]"));
            want.push(format!("{n} [nvvm]"));
        }
        assert_eq!(labels, want);
        let note = format!("{} have no CUDA C++ twin", only.join(", "));
        assert!(p.notes.iter().any(|n| n.contains(&note)), "{:?}", p.notes);
        let e = plan(&k[1..], Which::Nvcc, default_sizes())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no CUDA C++ twin") && e.contains("--backend llvm"),
            "{e}"
        );
    }

    #[test]
    fn the_list_names_every_entry() {
        let help = names_help();
        for k in catalog::KERNELS {
            assert!(help.contains(k.name), "{}", k.name);
        }
        assert!(help.contains("[reduce_v3_f32]") && help.contains("reduce_v3_i32"));
    }
}
