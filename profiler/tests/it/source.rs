//! Hot source lines of a kernel the lab's tree does not hold, through the library alone: the
//! nvcc `-lineinfo` build of reduce_v3 in the H200 capture (`xtask/tests/fixtures/ncu/capture/`,
//! see its README) read with a source tree that is not the lab's and no PTX, first with the
//! line map the capture keeps, then with ncu's own lines. The lab's use of the same pages (its
//! tree, its PTX): `studies/tests/it/profile_source.rs`.

use crate::lab_fixtures;
use profiler::source::{self, Attribution, Origin};
use sass::source::Tree;
use std::path::PathBuf;

/// The nvcc capture's pages (and, with `map`, its line map) in a folder of their own.
fn staged(name: &str, map: bool) -> PathBuf {
    let kept = lab_fixtures().join("ncu/capture");
    let dir = std::env::temp_dir().join(format!("profiler-source-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut pages = vec!["source-sass.csv.gz", "source-cuda-sass.csv.gz"];
    if map {
        pages.push("source-lines.json.gz");
    }
    for p in pages {
        let name = format!("src-nvcc.{p}");
        std::fs::copy(kept.join(&name), dir.join(&name)).unwrap();
    }
    dir
}

fn hottest(dir: &std::path::Path) -> (Origin, u32, String) {
    let how = Attribution::ncu_only(Tree::at("/nowhere"));
    let ks = source::read(&dir.join("src-nvcc"), "nvcc", &how, false).unwrap();
    let v3 = ks.iter().find(|k| k.function == "reduce_v3_f32").unwrap();
    let top = &v3.lines[0];
    assert!(top.at.file.ends_with("kernels.cu"), "{:?}", top.at);
    (v3.origin.clone(), top.at.line, top.at.text.clone())
}

#[test]
fn a_foreign_tree_gets_its_hot_lines_from_the_capture_alone() {
    let dir = staged("map", true);
    let (origin, line, text) = hottest(&dir);
    assert!(matches!(origin, Origin::Chains { .. }), "{origin:?}");
    // The file is not on this machine: the text is the one ncu captured.
    assert_eq!(
        (line, text.as_str()),
        (54, "s[threadIdx.x] = i < n ? in[i] : T(0);")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_a_line_map_or_ptx_ncus_own_lines_say_why() {
    let dir = staged("ncu", false);
    let (origin, line, text) = hottest(&dir);
    let Origin::Ncu { why } = &origin else {
        panic!("{origin:?}");
    };
    assert!(
        why.contains("source-lines.json and no PTX to make it from"),
        "{why}"
    );
    assert_eq!(
        (line, text.as_str()),
        (54, "s[threadIdx.x] = i < n ? in[i] : T(0);")
    );
    assert!(
        !dir.join("src-nvcc.source-lines.json").exists(),
        "nothing written"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
