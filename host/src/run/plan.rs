//! What `lab run` will launch: `--kernel` resolved against the catalogue, each kernel on every
//! chosen backend that carries it, and the device memory that takes, all before touching the
//! GPU.

use super::NVTX_FILTER;
use crate::cases::cub;
use crate::error::{HostError, Result};
use catalog::kernels::Selected;
use catalog::model::Size;
use catalog::records::{Plan, Planned, Sizes};
use catalog::{Backend, Dtype, Family, Kernel, Runner, Shape, Which};

/// Default element count of the reductions and `bump` (2^24: ncu's replays stay short).
pub const DEFAULT_N: u64 = 1 << 24;
/// Default transpose shape, rows = cols.
pub const DEFAULT_EDGE: u32 = 4096;

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
    /// What a spec picked: the element type it named, else f32, or the kernel's one type
    /// when it has no f32 entry (`load_wait`: i32).
    fn of(s: Selected) -> RunKernel {
        let only = match s.kernel.dtypes {
            [one] => Some(*one),
            _ => None,
        };
        RunKernel {
            kernel: s.kernel,
            dtype: s.dtype.or(only).unwrap_or(Dtype::F32),
        }
    }

    /// The name users type and tables show: `reduce_v3` (f32), `reduce_v3_i32`; a kernel of
    /// one type goes by its name alone (`load_wait`).
    pub fn name(self) -> String {
        if self.dtype == Dtype::F32 || self.kernel.dtypes.len() <= 1 {
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

    /// Elements it processes (a matrix's for the transpose family and the other kernels
    /// launched on its tiles).
    fn elements(self, s: Sizes) -> u64 {
        self.model_size(s).elements()
    }

    /// Its size for the model (`catalog::model`): a fault kernel's own (the catalogue's, at
    /// which `lab run` runs it whatever the flags say), the matrix for a kernel on tiles or of
    /// the transpose family (the copy of the same bytes), else `n` elements.
    pub(super) fn model_size(self, s: Sizes) -> Size {
        if let Some(f) = self.kernel.fault {
            return Size::Vector(f.size);
        }
        match (self.kernel.family, self.kernel.shape) {
            (Family::Transpose, _) | (_, Shape::Tiles { .. } | Shape::Rows { .. }) => {
                Size::Matrix {
                    rows: s.rows,
                    cols: s.cols,
                }
            }
            _ => Size::Vector(s.n),
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

/// Refuses sizes no launch of `kernels` can take: none may be 0, and `bump` indexes its
/// elements with a u32.
fn check_sizes(kernels: &[RunKernel], sizes: Sizes) -> Result<()> {
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
    Ok(())
}

/// The plan: the launches for `kernels` × `which`, kernel by kernel, each on every chosen
/// backend that carries it.
pub fn plan(kernels: &[RunKernel], which: Which, sizes: Sizes) -> Result<Plan> {
    check_sizes(kernels, sizes)?;
    let backends = which.backends();
    let mut notes = Vec::new();
    if let Some(why) = cub::unavailable() {
        notes.push(format!(
            "CUB is not in this binary ({why}): the groups leave it out"
        ));
    }
    let mut launches = Vec::new();
    let mut skipped = Vec::new();
    let mut refused = Vec::new();
    for &k in kernels {
        // A row-wise kernel whose schedule cannot hold the rows is left out, with the reason.
        if let Shape::Rows { op, schedule } = k.kernel.shape
            && let Err(why) = schedule.launch(op, sizes.rows as u64, sizes.cols as u64, k.dtype)
        {
            refused.push(format!("{}: {why}", k.name()));
            continue;
        }
        let via = k.via(&backends);
        if k.kernel.library.is_none() && via.len() < backends.len() {
            let missing: Vec<Backend> = backends
                .iter()
                .copied()
                .filter(|&b| !k.kernel.carried_by(b))
                .collect();
            skipped.push((k, missing));
        }
        for b in via {
            let backend = Runner::of(b);
            launches.push(Planned {
                label: format!("{} [{backend}]", k.name()),
                kernel: k.name(),
                entry: k.entry(),
                family: k.kernel.family,
                backend,
                elements: k.elements(sizes),
                launches: k.kernel.launches(),
            });
        }
    }
    if !refused.is_empty() {
        if launches.is_empty() {
            return Err(HostError::Invalid {
                what: "--rows/--cols",
                detail: refused.join("; "),
            });
        }
        notes.extend(refused.into_iter().map(|r| format!("not run: {r}")));
    }
    // The Rust-only kernels (no CUDA C++ twin), then any some Rust compiler lacks too, each
    // with where they do run.
    let (twinless, others): (Vec<_>, Vec<_>) = skipped
        .into_iter()
        .partition(|(_, missing)| *missing == [Backend::Nvcc]);
    let mut why = Vec::new();
    if !twinless.is_empty() {
        let names: Vec<String> = twinless.into_iter().map(|(k, _)| k.name()).collect();
        let verb = if names.len() == 1 { "has" } else { "have" };
        why.push((
            format!(
                "{} {verb} no CUDA C++ twin (Rust-only kernels)",
                names.join(", ")
            ),
            "nvcc".to_string(),
            "llvm, nvvm or both",
        ));
    }
    for (k, missing) in others {
        let missing: Vec<&str> = missing.iter().map(|b| b.name()).collect();
        let carried: Vec<&str> = Backend::ALL
            .into_iter()
            .filter(|&b| k.kernel.carried_by(b))
            .map(Backend::name)
            .collect();
        why.push((
            format!("{} is built by {} only", k.name(), carried.join(" and ")),
            missing.join(", "),
            "one that builds it",
        ));
    }
    for (what, missing, instead) in why {
        if launches.is_empty() {
            return Err(HostError::Invalid {
                what: "--backend",
                detail: format!("{what}: use --backend {instead}"),
            });
        }
        notes.push(format!("{what}: not run on {missing}"));
    }
    Ok(Plan {
        sizes,
        backends_built: Backend::ALL.to_vec(),
        notes,
        nvtx_filter: NVTX_FILTER.to_string(),
        launches,
    })
}

/// Checks a plan made by an earlier `lab run --plan` (or a part of one) before it runs: each
/// launch names one catalogue kernel, on a runner that carries it, and the sizes are ones
/// [`plan`] accepts.
pub fn check(plan: &Plan) -> Result<()> {
    let invalid = |detail: String| HostError::Invalid {
        what: "--from-plan",
        detail,
    };
    let mut kernels = Vec::new();
    for p in &plan.launches {
        let picked =
            catalog::select(&p.kernel).map_err(|e| invalid(format!("{}: {e}", p.label)))?;
        let [s] = picked[..] else {
            return Err(invalid(format!(
                "{}: '{}' names {} kernels, a planned launch one",
                p.label,
                p.kernel,
                picked.len()
            )));
        };
        let k = RunKernel::of(s);
        let runs = match p.backend {
            Runner::Compiled(b) => k.kernel.library.is_none() && k.kernel.carried_by(b),
            Runner::Cub => k.kernel.library.is_some(),
            Runner::Driver => false,
        };
        if !runs {
            return Err(invalid(format!(
                "{}: {} does not run on {}",
                p.label,
                k.name(),
                p.backend
            )));
        }
        kernels.push(k);
    }
    check_sizes(&kernels, plan.sizes)
}

/// The catalogue kernel a planned launch names ([`check`] has made sure it names one).
pub(super) fn planned_kernel(p: &Planned) -> RunKernel {
    let s = catalog::select(&p.kernel).expect("a planned kernel is in the catalogue");
    RunKernel::of(s[0])
}

/// The backend a planned launch runs on (None: the library call).
pub(super) fn planned_backend(p: &Planned) -> Option<Backend> {
    p.backend.backend()
}

/// Device bytes the planned launches hold at once, for refusing a size before any input is
/// generated: each element type's input (n + offset elements, shared by every reduction of
/// that type and the read stream), the transposes' input and output matrices (shared by every
/// transpose and the copy kernel), `bump`'s own buffer and the block and scattered-store
/// roofs' outputs. CUB's temporary storage (sized by CUB at run time, small next to its input),
/// the 4-byte results and the other roofs' few MiB are left out.
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
    // The row-wise family: a matrix, its output and the weights, per element type.
    for d in catalog::rows::DTYPES {
        if has(&|k| k.kernel.family == Family::Rows && k.dtype == d) {
            let matrix = (s.rows as u64 * s.cols as u64).saturating_mul(2);
            let bytes_of = (matrix + 2 * s.cols as u64).saturating_mul(d.size());
            bytes = bytes.saturating_add(bytes_of);
        }
    }
    if has(&|k| k.kernel.family == Family::LaunchGap) {
        bytes = bytes.saturating_add(s.n.saturating_mul(4));
    }
    // The roofs' own buffers: a word per empty block and per tree, the scattered matrix, the
    // tile copy's input and output.
    if has(&|k| is(k, crate::launchers::roofs::empty_blocks())) {
        bytes = bytes.saturating_add(s.n.saturating_mul(4));
    }
    if has(&|k| is(k, crate::launchers::roofs::scatter_store())) {
        bytes = bytes.saturating_add((s.rows as u64 * s.cols as u64).saturating_mul(4));
    }
    for t in catalog::kernels::Tree::ALL {
        if has(&|k| is(k, crate::launchers::roofs::tree(t))) {
            bytes = bytes.saturating_add(s.n.saturating_mul(4));
        }
    }
    if has(&|k| is(k, crate::launchers::roofs::tile_copy())) {
        bytes = bytes.saturating_add((s.rows as u64 * s.cols as u64).saturating_mul(8));
    }
    // The fault pairs run one at a time, each on its own inputs.
    let faults = kernels
        .iter()
        .filter_map(|k| k.kernel.fault)
        .map(|f| crate::cases::faults::Inputs::bytes(f.pair))
        .max()
        .unwrap_or(0);
    bytes.saturating_add(faults)
}

/// Whether `k` reads the run's random vector of its element type (the reductions, CUB, the
/// read stream).
fn uses_vector(k: RunKernel) -> bool {
    k.kernel.family == Family::Reduce || is(k, crate::launchers::stream::read_stream())
}

fn is(k: RunKernel, kernel: &Kernel) -> bool {
    k.kernel.name == kernel.name
}
