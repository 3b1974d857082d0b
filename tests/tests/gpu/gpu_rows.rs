//! Every row-wise kernel (softmax, RMSNorm, LayerNorm in each schedule) × element type (f32,
//! bf16) × backend against the f64 reference (`host::cpu::rows`), within its element type's
//! tolerance (`host::cases::rows::tolerance`): at rows of length 1, odd, not a multiple of 4,
//! 8 or 32, at each schedule's boundaries (one more vector than a warp, a block or a cluster
//! block holds; the longest it holds), with rows of huge values, −inf, NaN and +inf (PyTorch's
//! results), from misaligned pointers, and in place; and hostile shapes refused in one line.
//! Skips visibly without a GPU.

use crate::common::{assert_no_failures, lab_or_skip, seed};
use catalog::Dtype;
use catalog::rows::{Op, Schedule, per_vector};
use cust::memory::CopyDestination;
use host::cases::Case;
use host::cases::rows::{Device, Inputs, RowCase, compare, tolerance};
use host::launchers::rows::{
    Bf16, RowArgs, RowElem, check_args, op_schedule, row_kernel, row_kernels,
};
use host::{Backend, Kernel, Lab};

/// The shapes every schedule must get right, and its own boundaries: the longest row it holds,
/// that less one vector, and one vector past the threads one warp (block, cluster block)
/// covers; the streamed schedule, which holds any row, around its passes' steps instead.
fn shapes(s: Schedule, d: Dtype) -> Vec<(u32, u32)> {
    let v = per_vector(d) as u32;
    let max = s.max_cols(d) as u32;
    let per_warp = 32 * s.vectors() * v;
    let mut out = vec![
        (1, 1),
        (3, 7),
        (2, 31),
        (2, 33),
        (4, 100),
        (3, 129),
        (5, 1000),
    ];
    if s != Schedule::Streamed {
        out.extend([(2, max), (2, max - v), (2, max - 1)]);
    }
    match s {
        // 1001 rows: the last block's warps partly past the last row.
        Schedule::Narrow | Schedule::Warp => out.extend([(1001, 64), (9, per_warp - v)]),
        Schedule::Block | Schedule::Wide => {
            out.extend([(3, per_warp + v), (3, 2 * per_warp), (2, 16 * per_warp + v)])
        }
        Schedule::Cluster | Schedule::Pair => {
            let per_block = catalog::rows::cluster_threads(d) * s.vectors() * v;
            // Rows that fill their clusters (every thread's part whole): of 2 blocks (the
            // merge of equal parts) and of 3 (not a power of two: the general merge).
            out.extend([
                (3, per_block),
                (3, per_block + v),
                (2, 5 * per_block + 3),
                (2, 2 * per_block),
                (2, 3 * per_block),
            ]);
            if s == Schedule::Pair {
                // A pair's second half idle (one row, an odd count) and both halves busy.
                out.extend([(1, 2 * per_block), (5, 3 * per_block + v), (4, per_block)]);
            }
        }
        Schedule::Streamed => {
            // A pass's step: the block's threads' loads at once.
            let step = catalog::rows::largest_block(Op::Softmax, s, d) * s.vectors() * v;
            let longest_held = Schedule::Cluster.max_cols(d) as u32;
            out.extend([
                (3, step - v),
                (3, step),
                (3, step + v),
                (2, 3 * step + 5),
                (2, longest_held + v),
            ]);
        }
    }
    out.retain(|&(_, c)| c as u64 <= s.max_cols(d));
    out
}

/// Runs `kernel` on `b` over `inputs` (`rows × cols`) once, from element `offset` of each
/// buffer, in place when `in_place`, and checks it against the reference.
#[allow(clippy::too_many_arguments)]
fn run<T: RowElem>(
    lab: &Lab,
    b: Backend,
    kernel: &'static Kernel,
    inputs: &Inputs<T>,
    (rows, cols): (u32, u32),
    offset: usize,
    in_place: bool,
) -> Result<String, String> {
    let (op, _) = op_schedule(kernel).map_err(|e| e.to_string())?;
    let pad = |v: &[T]| {
        let mut p = vec![T::default(); offset];
        p.extend_from_slice(v);
        p
    };
    let padded = Inputs {
        x: pad(&inputs.x),
        w: pad(&inputs.w),
        b: pad(&inputs.b),
    };
    let dev = Device::upload(lab, &padded).map_err(|e| e.to_string())?;
    let x = dev.x.index(offset..);
    let y = if in_place {
        dev.x.index(offset..)
    } else {
        dev.y.index(offset..)
    };
    let case = RowCase::new(
        lab,
        b,
        kernel,
        (x, dev.w.index(offset..), dev.b.index(offset..)),
        y,
        rows,
        cols,
    )
    .map_err(|e| e.to_string())?;
    // In place the output is the input: poisoning it would erase the row.
    if !in_place {
        case.reset().map_err(|e| e.to_string())?;
    }
    case.launch().map_err(|e| e.to_string())?;
    lab.sync().map_err(|e| e.to_string())?;
    let want = inputs.reference(op, cols as usize);
    if !in_place {
        return case.verify(&want).map_err(|e| e.to_string())?;
    }
    // In place: the output is in x.
    let mut h = vec![T::default(); rows as usize * cols as usize];
    dev.x
        .index(offset..offset + h.len())
        .copy_to(&mut h[..])
        .map_err(|e| e.to_string())?;
    let tol = tolerance(T::DTYPE);
    compare(&h, &want, cols as usize, tol).verdict(tol)
}

/// Every kernel on every backend that carries it, for each element type, over `shapes` of
/// its schedule, with `make` filling the inputs; the failure lines.
fn check_all(
    lab: &Lab,
    what: &str,
    shapes: impl Fn(Schedule, Op, Dtype) -> Vec<(u32, u32)>,
    make: impl Fn(Op, Dtype, u32, u32, u64) -> Option<(InputsOf, usize, bool)>,
) -> Vec<String> {
    let seed = seed();
    let mut failures = Vec::new();
    for b in lab.backends() {
        for k in row_kernels().filter(|k| k.carried_by(b)) {
            let (op, s) = op_schedule(k).unwrap();
            for d in catalog::rows::DTYPES {
                for (rows, cols) in shapes(s, op, d) {
                    let Some((inputs, offset, in_place)) = make(op, d, rows, cols, seed) else {
                        continue;
                    };
                    let case = format!(
                        "{} [{b}] {rows}x{cols} {what} offset {offset}{}",
                        k.entry(d),
                        if in_place { " in place" } else { "" }
                    );
                    let r = match &inputs {
                        InputsOf::F32(i) => run(lab, b, k, i, (rows, cols), offset, in_place),
                        InputsOf::Bf16(i) => run(lab, b, k, i, (rows, cols), offset, in_place),
                    };
                    match r {
                        Ok(note) => println!("ok      {case}: {note}"),
                        Err(why) => {
                            println!("FAILED  {case}: {why}");
                            failures.push(format!("{case}: {why}"));
                        }
                    }
                }
            }
        }
    }
    failures
}

/// Inputs of either element type.
enum InputsOf {
    F32(Inputs<f32>),
    Bf16(Inputs<Bf16>),
}

/// Random inputs of `d`, with `edit` applied to the row-major values of `x` (as f32).
fn random(d: Dtype, rows: u32, cols: u32, seed: u64, edit: impl Fn(usize, &mut f32)) -> InputsOf {
    fn with<T: RowElem>(mut i: Inputs<T>, edit: impl Fn(usize, &mut f32)) -> Inputs<T> {
        for (k, x) in i.x.iter_mut().enumerate() {
            let mut v = x.to_f32();
            edit(k, &mut v);
            *x = T::from_f32(v);
        }
        i
    }
    let seed = seed ^ (rows as u64) << 32 ^ cols as u64;
    match d {
        Dtype::Bf16 => InputsOf::Bf16(with(
            Inputs::random(rows as usize, cols as usize, seed),
            edit,
        )),
        _ => InputsOf::F32(with(
            Inputs::random(rows as usize, cols as usize, seed),
            edit,
        )),
    }
}

#[test]
fn every_row_kernel_matches_its_reference_at_every_boundary() {
    let Some(lab) = lab_or_skip("every_row_kernel_matches_its_reference_at_every_boundary") else {
        return;
    };
    assert_eq!(
        lab.backends(),
        Backend::ALL,
        "this binary must carry every compiler's PTX"
    );
    let failures = check_all(
        &lab,
        "random",
        |s, _, d| shapes(s, d),
        |_, d, rows, cols, seed| Some((random(d, rows, cols, seed, |_, _| {}), 0, false)),
    );
    assert_no_failures(&failures);
}

/// PyTorch's special values, one row each (`cols` past a warp's share, so several threads
/// merge them): softmax of huge values does not overflow, a row of all −inf is NaN, a −inf is
/// 0, a NaN or a +inf makes its row NaN, a row shifted by +200 (whose exponentials overflow
/// f32 unless the max is subtracted first) is fine; a NaN makes a norm's row NaN; norms of
/// values ×1e4 and RMSNorm of a constant row are right.
#[test]
fn special_values_follow_pytorch() {
    let Some(lab) = lab_or_skip("special_values_follow_pytorch") else {
        return;
    };
    const ROWS: u32 = 7;
    let inf = f32::INFINITY;
    let at = |s: Schedule, _: Op, d: Dtype| {
        let c = (s.max_cols(d) as u32).min(1000);
        vec![(ROWS, c), (ROWS, c - 1)]
    };
    let failures = check_all(&lab, "special values", at, |op, d, rows, cols, seed| {
        let edit = move |k: usize, v: &mut f32| {
            let (r, j) = (k / cols as usize, k % cols as usize);
            match (op, r) {
                (Op::Softmax, 0) => *v = if j % 2 == 0 { 3e38 } else { -3e38 },
                (Op::Softmax, 1) => *v = -inf,
                (Op::Softmax, 2) if j % 3 == 0 => *v = -inf,
                (Op::Softmax, 3) if j == cols as usize / 2 => *v = f32::NAN,
                (Op::Softmax, 4) if j == cols as usize - 1 => *v = inf,
                (Op::Softmax, 5) => *v += 200.0,
                (_, 0) if j == cols as usize - 1 => *v = f32::NAN,
                (_, 1) => *v *= 1e4,
                // A constant row: RMSNorm's is w. (LayerNorm's variance is 0 there, so its
                // 1/sqrt(eps) = 316 scales any rounding of the mean: no f32 kernel meets an
                // f64 tolerance on it, PyTorch's neither.)
                (Op::RmsNorm, 2) => *v = 1.0,
                _ => {}
            }
        };
        Some((random(d, rows, cols, seed, edit), 0, false))
    });
    assert_no_failures(&failures);
}

/// Pointers past a 16-byte boundary and in-place runs take the element-by-element path or the
/// vector path and still match.
#[test]
fn misaligned_pointers_and_in_place_runs_match() {
    let Some(lab) = lab_or_skip("misaligned_pointers_and_in_place_runs_match") else {
        return;
    };
    let at = |s: Schedule, _: Op, d: Dtype| {
        let c = (s.max_cols(d) as u32).min(1024);
        vec![(5, c), (3, c - 8)]
    };
    let mut failures = Vec::new();
    for (offset, in_place) in [(1, false), (3, false), (0, true)] {
        failures.extend(check_all(
            &lab,
            "misaligned/in place",
            at,
            |_, d, rows, cols, seed| {
                Some((random(d, rows, cols, seed, |_, _| {}), offset, in_place))
            },
        ));
    }
    assert_no_failures(&failures);
}

/// Shapes a schedule cannot take (saying which can), buffers too short and overlapping ones
/// are refused before any launch, each in one line.
#[test]
fn hostile_shapes_are_refused_in_one_line() {
    let Some(lab) = lab_or_skip("hostile_shapes_are_refused_in_one_line") else {
        return;
    };
    let dev = Device::<f32>::upload(&lab, &Inputs::random(4, 1024, 1)).unwrap();
    let case = |k: &'static Kernel, rows: u32, cols: u32, y| {
        RowCase::new(&lab, Backend::Llvm, k, dev.inputs(), y, rows, cols).map(|_| ())
    };
    let mut errors = vec![
        case(
            row_kernel(Op::Softmax, Schedule::Warp),
            4,
            513,
            dev.y.index(..),
        ),
        case(
            row_kernel(Op::Softmax, Schedule::Cluster),
            1,
            262_145,
            dev.y.index(..),
        ),
        case(
            row_kernel(Op::LayerNorm, Schedule::Block),
            5,
            1024,
            dev.y.index(..),
        ),
        case(
            row_kernel(Op::RmsNorm, Schedule::Block),
            2,
            1024,
            dev.x.index(100..),
        ),
        check_args(
            Op::Softmax,
            &RowArgs {
                x: &dev.x,
                w: None,
                b: None,
                y: &dev.y,
                rows: u32::MAX,
                cols: u32::MAX,
                eps: 0.0,
            },
        ),
    ]
    .into_iter();
    let mut expect = |what: &str| {
        let e = errors.next().unwrap().unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    };
    expect("at most 512 f32");
    expect("use the streamed schedule");
    expect("needs 5120");
    expect("overlap");
    expect("rows × cols");
}

/// The schedule each shape of the bench gets launches, at its real size, on every backend
/// (one row of each: the bench checks them all).
#[test]
fn the_bench_shapes_launch_in_their_chosen_schedule() {
    let Some(lab) = lab_or_skip("the_bench_shapes_launch_in_their_chosen_schedule") else {
        return;
    };
    let at = |s: Schedule, op: Op, d: Dtype| {
        catalog::rows::SHAPES
            .iter()
            .filter(|&&(_, c)| catalog::rows::chosen(op, c as u64, d) == Some(s))
            .map(|&(_, c)| (2, c))
            .collect()
    };
    let failures = check_all(&lab, "bench shape", at, |_, d, rows, cols, seed| {
        Some((random(d, rows, cols, seed, |_, _| {}), 0, false))
    });
    assert_no_failures(&failures);
}

/// Past 2^31 elements (8 GiB of f32, 4 GiB of bf16), every kernel at a row length its schedule
/// holds: a row's offset is 64-bit. The first row and the last two (which start past element
/// 2^31, and past byte 2^32 in f32) hold random values and are checked against the reference,
/// the output poisoned first: an offset that wrapped would leave them NaN or write over the
/// first. Skipped where the GPU lacks the memory.
#[test]
fn every_row_kernel_past_2_pow_31_elements() {
    let Some(lab) = lab_or_skip("every_row_kernel_past_2_pow_31_elements") else {
        return;
    };
    let mut failures = Vec::new();
    for d in catalog::rows::DTYPES {
        match d {
            Dtype::Bf16 => failures.extend(past_2_pow_31::<Bf16>(&lab)),
            _ => failures.extend(past_2_pow_31::<f32>(&lab)),
        }
    }
    assert_no_failures(&failures);
}

/// The shape each schedule runs past 2^31 elements: its longest row (the streamed schedule,
/// which holds any, a few of its steps and a ragged end), and rows enough that the last two
/// start past element 2^31.
fn past_2_pow_31_shape(s: Schedule, d: Dtype) -> (u32, u32) {
    let v = per_vector(d) as u32;
    let cols = match s {
        Schedule::Streamed => {
            3 * catalog::rows::largest_block(Op::Softmax, s, d) * s.vectors() * v + 5
        }
        _ => s.max_cols(d) as u32,
    };
    ((1u64 << 31).div_ceil(cols as u64) as u32 + 2, cols)
}

fn past_2_pow_31<T: RowElem>(lab: &Lab) -> Vec<String> {
    use cust::memory::{CopyDestination, DeviceBuffer};
    let shapes: Vec<(Schedule, (u32, u32))> = Schedule::ALL
        .iter()
        .map(|&s| (s, past_2_pow_31_shape(s, T::DTYPE)))
        .collect();
    let n = shapes
        .iter()
        .map(|(_, (r, c))| *r as usize * *c as usize)
        .max()
        .unwrap();
    let cols_max = shapes.iter().map(|(_, (_, c))| *c as usize).max().unwrap();
    let bytes = (2 * n + 2 * cols_max) * size_of::<T>();
    let (free, _) = lab.memory().unwrap();
    if free < bytes as u64 + (1 << 30) {
        println!(
            "skipped: {} past 2^31 elements needs {bytes} bytes, {free} free",
            T::DTYPE
        );
        return Vec::new();
    }
    let alloc = |len: usize| DeviceBuffer::<T>::zeroed(len).unwrap();
    let (x, y, w, b) = (alloc(n), alloc(n), alloc(cols_max), alloc(cols_max));
    let mut failures = Vec::new();
    for (s, (rows, cols)) in shapes {
        let (r, c) = (rows as usize, cols as usize);
        // Rows 0, rows − 2 and rows − 1, random; the weights of this length.
        let host = Inputs::<T>::random(3, c, seed() ^ cols as u64);
        let checked = [0, r - 2, r - 1];
        for (i, &row) in checked.iter().enumerate() {
            x.index(row * c..(row + 1) * c)
                .copy_from(&host.x[i * c..(i + 1) * c])
                .unwrap();
        }
        w.index(..c).copy_from(&host.w[..]).unwrap();
        b.index(..c).copy_from(&host.b[..]).unwrap();
        for backend in lab.backends() {
            for k in row_kernels().filter(|k| k.carried_by(backend)) {
                let (op, schedule) = op_schedule(k).unwrap();
                if schedule != s {
                    continue;
                }
                let case = format!("{} [{backend}] {rows}x{cols}", k.entry(T::DTYPE));
                let verdict = (|| -> Result<String, String> {
                    let e = |e: host::HostError| e.to_string();
                    let run = RowCase::new(
                        lab,
                        backend,
                        k,
                        (x.index(..r * c), w.index(..c), b.index(..c)),
                        y.index(..r * c),
                        rows,
                        cols,
                    )
                    .map_err(e)?;
                    run.reset().map_err(e)?;
                    run.launch().map_err(e)?;
                    lab.sync().map_err(e)?;
                    let mut got = vec![T::default(); 3 * c];
                    for (i, &row) in checked.iter().enumerate() {
                        y.index(row * c..(row + 1) * c)
                            .copy_to(&mut got[i * c..(i + 1) * c])
                            .map_err(|e| e.to_string())?;
                    }
                    let tol = tolerance(T::DTYPE);
                    compare(&got, &host.reference(op, c), c, tol).verdict(tol)
                })();
                match verdict {
                    Ok(note) => println!("ok      {case} rows 0, {}, {}: {note}", r - 2, r - 1),
                    Err(why) => {
                        println!("FAILED  {case}: {why}");
                        failures.push(format!("{case}: {why}"));
                    }
                }
            }
        }
    }
    failures
}
