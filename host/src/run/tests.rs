//! `lab run`'s plan, names and records, without a GPU.

use super::*;
use crate::cases::cub;
use catalog::kernels::Kernel;
use catalog::{Backend, Dtype};

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
        // The Rust compilers' kernels that both carry and that run at any size (a row-wise
        // kernel's schedule may not hold the default rows).
        .filter(|k| k.library.is_none() && !k.carried_by(Backend::Nvcc))
        .filter(|k| k.carried_by(Backend::Nvvm) && k.family != catalog::Family::Rows)
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
    // A kernel of one type runs in it, under its plain name.
    assert_eq!(k("load_wait").entry(), "load_wait_i32");
    assert_eq!(k("load_wait").name(), "load_wait");
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
    let needed = bytes_needed(&plan(&select("reduce_v1").unwrap(), Which::Both, sizes).unwrap());
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

/// A plan `--plan` printed runs as it is, whole or in part; a hand-made one is held to the
/// catalogue before any GPU work.
#[test]
fn a_plan_given_back_is_checked_against_the_catalogue() {
    let whole = plan(
        &select("reduce_v3,transpose_naive").unwrap(),
        Which::All,
        default_sizes(),
    )
    .unwrap();
    check(&whole).unwrap();
    let mut part = whole.clone();
    part.launches.retain(|l| l.backend == Backend::Nvvm);
    assert_eq!(part.launches.len(), 2);
    check(&part).unwrap();

    let mut odd = part.clone();
    odd.launches[0].kernel = "reduce".into();
    let e = check(&odd).unwrap_err().to_string();
    assert!(
        e.starts_with("--from-plan: reduce_v3 [nvvm]: 'reduce' names "),
        "{e}"
    );

    let mut off = part.clone();
    off.launches[0].backend = catalog::Runner::Cub;
    let e = check(&off).unwrap_err().to_string();
    assert!(e.contains("reduce_v3 does not run on cub"), "{e}");

    let mut empty = part;
    empty.sizes.n = 0;
    assert!(
        check(&empty)
            .unwrap_err()
            .to_string()
            .contains("at least 1")
    );
}

/// A row-wise kernel runs where its schedule holds the rows: the others of a family are left
/// out with the reason, and one named alone is refused with it; the cluster schedule runs on
/// both Rust compilers.
#[test]
fn a_row_kernel_runs_where_its_schedule_holds_the_rows() {
    let sizes = Sizes {
        rows: 64,
        cols: 4096,
        ..default_sizes()
    };
    let p = plan(&select("rows").unwrap(), Which::Both, sizes).unwrap();
    let labels: Vec<&str> = p.launches.iter().map(|l| l.label.as_str()).collect();
    assert!(labels.contains(&"softmax_block [nvvm]"), "{labels:?}");
    assert!(labels.contains(&"layernorm_cluster [llvm]"), "{labels:?}");
    assert!(labels.contains(&"softmax_cluster [nvvm]"), "{labels:?}");
    assert!(!labels.iter().any(|l| l.contains("_warp")), "{labels:?}");
    assert!(
        p.notes.iter().any(|n| n.contains(
            "softmax_warp: cols = 4096: the warp schedule holds rows of at most 512 f32"
        )),
        "{:?}",
        p.notes
    );
    let e = plan(&select("softmax_warp").unwrap(), Which::Llvm, sizes)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--rows/--cols") && e.contains("at most 512"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    // The matrix, its output and the weights of each element type run.
    let one = plan(
        &select("rmsnorm_block,rmsnorm_block_bf16").unwrap(),
        Which::Llvm,
        sizes,
    )
    .unwrap();
    let matrix = 64 * 4096;
    assert_eq!(bytes_needed(&one), (2 * matrix + 2 * 4096) * (4 + 2));
}

/// A kernel some Rust compiler lacks too says where it runs, and one asked of that compiler
/// alone is refused (the catalogue has none now: a cluster kernel made rustc's only).
#[test]
fn a_kernel_one_compiler_builds_says_so() {
    let sizes = Sizes {
        rows: 8,
        cols: 4096,
        ..default_sizes()
    };
    let llvm_only: &'static Kernel = Box::leak(Box::new(Kernel {
        compilers: &[Backend::Llvm],
        ..*catalog::kernels::find("rmsnorm_cluster").unwrap()
    }));
    let mut kernels = select("softmax_block").unwrap();
    kernels.push(RunKernel {
        kernel: llvm_only,
        dtype: Dtype::F32,
    });
    let p = plan(&kernels, Which::All, sizes).unwrap();
    assert!(
        p.notes
            .iter()
            .any(|n| n == "rmsnorm_cluster is built by llvm only: not run on nvvm, nvcc"),
        "{:?}",
        p.notes
    );
    assert!(
        p.launches
            .iter()
            .all(|l| l.label != "rmsnorm_cluster [nvvm]")
    );
    let e = plan(&kernels[1..], Which::Nvvm, sizes)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("rmsnorm_cluster is built by llvm only: use --backend one that builds it"),
        "{e}"
    );
}
