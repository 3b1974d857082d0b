//! `asm --check`'s "cluster row loads at once" on the mechanism it is for: rust-cuda's RMSNorm
//! f32 cluster kernel, assembled from the PTX `cargo xtask ptx` writes (with its launch bounds,
//! `catalog::rows::launch_bounds`) and from the same PTX without them.

use catalog::Backend;
use studies::asm::checks::{load_runs, row_at_once};

/// The 16-byte load runs of `kernel` in rust-cuda's PTX, `edit`ed, as ptxas builds it.
fn runs(kernel: &str, edit: impl Fn(&str) -> String) -> Vec<usize> {
    let built = catalog::ptx::path(Backend::Nvvm);
    let root = studies::util::root();
    let text = std::fs::read_to_string(root.join(&built))
        .unwrap_or_else(|e| panic!("{built}: {e} (cargo xtask ptx)"));
    let dir = root.join("target/asm");
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join(format!("cluster-loads-{kernel}-{}.ptx", std::process::id()));
    std::fs::write(&ptx, edit(&text)).unwrap();
    let mut builds = studies::asm::load_builds(std::slice::from_ref(&ptx), None, false).unwrap();
    let sass = builds[0].sass().unwrap();
    let _ = std::fs::remove_file(&ptx);
    let f = sass
        .function(kernel)
        .unwrap_or_else(|| panic!("no {kernel}"));
    load_runs(f).expect("control bits")
}

/// With its bounds every run holds a thread's `CLUSTER_VECTORS` loads; without them ptxas
/// (CUDA 13.0) takes 48 registers and issues the walking path's row in two runs, the check's
/// failure.
#[test]
fn rmsnorm_cluster_f32_issues_its_row_at_once_only_when_bounded() {
    let bounded = runs("rmsnorm_cluster_f32", str::to_string);
    assert!(row_at_once(&bounded), "{bounded:?}");
    // The bounds of this entry (other entries carry the same ones): the first after its name.
    let bounds = ".maxntid 512, 1, 1\n.minnctapersm 2\n";
    let free = runs("rmsnorm_cluster_f32", |t: &str| {
        let entry = t.find(".entry rmsnorm_cluster_f32(").expect("the entry");
        let at = entry + t[entry..].find(bounds).expect("its bounds");
        assert!(
            !t[entry + 1..at].contains(".entry "),
            "bounds of the entry itself"
        );
        format!("{}{}", &t[..at], &t[at + bounds.len()..])
    });
    assert!(!row_at_once(&free), "{free:?}");
}
