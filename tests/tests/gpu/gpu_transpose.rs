//! Every transpose × backend against a CPU transpose, element-exact (bit patterns), with
//! the output poisoned (all-ones NaN) before every launch so an unwritten element shows.

use crate::common::{assert_no_failures, lab_or_skip, seed};
use cust::memory::CopyDestination;
use host::launchers::transpose::{grid, tile};
use host::launchers::{MAX_GRID_Y, check_matrix_lengths, transposes};
use host::{HostError, cpu};

const POISON: u32 = 0xFFFF_FFFF;

#[test]
fn transposes_element_exact() {
    let Some(lab) = lab_or_skip("transposes_element_exact") else {
        return;
    };
    let seed = seed();
    // Square powers of two; odd shapes (edge tiles, 4-byte paths); multiples of 4 ending in
    // partial 64×64 tiles (transpose_v4's 16-byte path with guards); tall and wide ones.
    let shapes = [
        (4096, 4096),
        (8192, 8192),
        (1000, 777),
        (777, 1000),
        (1, 1),
        (33, 31),
        (31, 33),
        (1, 1000),
        (1000, 1),
        (1000, 1000),
        (100, 68),
        (68, 100),
        (2564, 196),
        (196, 2564),
    ];
    let mut failures = Vec::new();
    for (rows, cols) in shapes {
        let x = cpu::random::f32s(rows * cols, seed ^ (rows * 31 + cols) as u64);
        let want = cpu::transpose(&x, rows, cols);
        let input = lab.upload(&x).unwrap();
        let mut output = lab.upload(&vec![0f32; x.len()]).unwrap();
        for backend in lab.backends() {
            for variant in transposes().filter(|v| v.carried_by(backend)) {
                output.set_32(POISON).unwrap();
                let case = format!("{} [{backend}] {rows}×{cols}", variant.name);
                if let Err(e) = lab
                    .launch_transpose(
                        backend,
                        variant,
                        &input,
                        &output,
                        rows as u32,
                        cols as u32,
                        &lab.stream,
                    )
                    .and_then(|_| lab.sync())
                {
                    failures.push(format!("{case}: {e}"));
                    continue;
                }
                let mut got = vec![0f32; x.len()];
                output.copy_to(&mut got[..]).unwrap();
                match got
                    .iter()
                    .zip(&want)
                    .position(|(g, w)| g.to_bits() != w.to_bits())
                {
                    None => println!("ok      {case}"),
                    Some(i) => {
                        let why =
                            format!("first mismatch at {i}: got {:?}, want {}", got[i], want[i]);
                        println!("FAILED  {case}: {why}");
                        failures.push(format!("{case}: {why}"));
                    }
                }
            }
        }
    }
    assert_no_failures(&failures);
}

/// Zero rows or columns: nothing to do, nothing launched, no error.
#[test]
fn transpose_empty_matrix() {
    let Some(lab) = lab_or_skip("transpose_empty_matrix") else {
        return;
    };
    let buf = lab.upload(&[1f32]).unwrap();
    for backend in lab.backends() {
        for variant in transposes().filter(|v| v.carried_by(backend)) {
            lab.launch_transpose(backend, variant, &buf, &buf, 0, 5, &lab.stream)
                .unwrap();
            lab.launch_transpose(backend, variant, &buf, &buf, 5, 0, &lab.stream)
                .unwrap();
        }
    }
}

/// Buffers shorter than rows × cols and row counts past the grid's y limit are refused by
/// checks that need no GPU (the launchers make them first).
#[test]
fn transpose_refuses_bad_shapes() {
    for (input, output, what) in [(16, 25, "input"), (25, 24, "output")] {
        let e = check_matrix_lengths(5, 5, input, output);
        assert!(
            matches!(e, Err(HostError::Invalid { what: w, .. }) if w == what),
            "{e:?}"
        );
    }
    assert!(check_matrix_lengths(5, 5, 25, 25).is_ok());
    assert!(check_matrix_lengths(0, 5, 0, 0).is_ok());
    for v in transposes() {
        // The extent that runs along the grid's y: rows in raster order, cols down the columns.
        let (tile, down_columns) = tile(v).unwrap();
        let max = (MAX_GRID_Y * tile as u64) as u32;
        let shape = |along_y: u32| {
            if down_columns {
                (8, along_y)
            } else {
                (along_y, 8)
            }
        };
        let (rows, cols) = shape(max);
        assert_eq!(grid(v, rows, cols).unwrap().1 as u64, MAX_GRID_Y, "{v:?}");
        let (rows, cols) = shape(max + 1);
        match grid(v, rows, cols) {
            Err(e @ HostError::TooLarge { .. }) => {
                assert!(e.to_string().contains(&max.to_string()), "{e}")
            }
            other => panic!("{v:?}: expected TooLarge, got {other:?}"),
        }
    }
}

/// The launcher and the launch config refuse what the shape checks refuse, with their words.
#[test]
fn transpose_launcher_applies_the_shape_checks() {
    let Some(lab) = lab_or_skip("transpose_launcher_applies_the_shape_checks") else {
        return;
    };
    let small = lab.upload(&[0f32; 16]).unwrap();
    let e = lab.launch_transpose(
        host::Backend::Llvm,
        catalog::kernels::find("transpose_naive").unwrap(),
        &small,
        &small,
        5,
        5,
        &lab.stream,
    );
    let want = check_matrix_lengths(5, 5, 16, 16);
    assert_eq!(format!("{e:?}"), format!("{want:?}"));
    let padded = catalog::kernels::find("transpose_padded").unwrap();
    let rows = 65_535 * 32 + 1;
    let e = lab.transpose_config(padded, rows, 8).map(|c| c.grid);
    let want = grid(padded, rows, 8);
    assert!(want.is_err());
    assert_eq!(format!("{e:?}"), format!("{want:?}"));
}

/// The copy ceiling's kernel, every backend: each element exactly (bit patterns) for sizes
/// with and without a scalar tail, into a poisoned output; misaligned buffers and a short
/// output are refused.
#[test]
fn copy_stream_copies_every_element() {
    let Some(lab) = lab_or_skip("copy_stream_copies_every_element") else {
        return;
    };
    let x = cpu::random::f32s((1 << 22) + 7, seed() ^ 0x636f_7079);
    let input = lab.upload(&x).unwrap();
    let mut output = lab.upload(&vec![0f32; x.len()]).unwrap();
    let mut failures = Vec::new();
    for backend in lab.backends() {
        for n in [0, 1, 3, 4, 5, 1_000_003, x.len()] {
            output.set_32(POISON).unwrap();
            let case = format!("copy_stream_f32 [{backend}] n={n}");
            if let Err(e) =
                lab.launch_copy_stream(backend, &input.index(..n), &output.index(..n), &lab.stream)
            {
                failures.push(format!("{case}: {e}"));
                continue;
            }
            lab.sync().unwrap();
            let mut got = vec![0f32; x.len()];
            output.copy_to(&mut got[..]).unwrap();
            let wrong = (0..n)
                .filter(|&i| got[i].to_bits() != x[i].to_bits())
                .count();
            let touched = (n..x.len()).filter(|&i| got[i].to_bits() != POISON).count();
            if wrong + touched == 0 {
                println!("ok      {case}");
            } else {
                println!("FAILED  {case}: {wrong} wrong, {touched} written past n");
                failures.push(format!("{case}: {wrong} wrong, {touched} written past n"));
            }
        }
    }
    assert_no_failures(&failures);
    let e = lab.launch_copy_stream(
        host::Backend::Llvm,
        &input.index(1..9),
        &output.index(0..8),
        &lab.stream,
    );
    assert!(
        matches!(e, Err(HostError::Invalid { .. })),
        "misaligned: {e:?}"
    );
    let e = lab.launch_copy_stream(
        host::Backend::Llvm,
        &input.index(0..8),
        &output.index(0..4),
        &lab.stream,
    );
    assert!(
        matches!(e, Err(HostError::Invalid { .. })),
        "short output: {e:?}"
    );
}
