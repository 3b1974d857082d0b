//! `lab run --plan` resolves the names once; `lab run --from-plan` runs what it printed (or a
//! part of it) without resolving them again, and refuses a plan the catalogue does not hold
//! before touching the GPU.

use std::process::{Command, Output};

fn lab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .output()
        .expect("run lab")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("lab-run-plan-{}-{name}", std::process::id()))
}

#[test]
fn a_printed_plan_runs_as_given_and_a_wrong_one_is_refused_first() {
    let o = lab(&[
        "run",
        "--kernel",
        "reduce_v3,transpose_naive",
        "--backend",
        "all",
        "--plan",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let launches = plan["launches"].as_array_mut().unwrap();
    launches.retain(|l| l["backend"] == "nvcc");
    assert_eq!(launches.len(), 2);

    let part = temp("part.json");
    std::fs::write(&part, plan.to_string()).unwrap();
    let o = lab(&["run", "--from-plan", part.to_str().unwrap()]);
    // Checked, then run: on a machine without a GPU the run ends at the device.
    if !o.status.success() {
        let err = stderr(&o);
        assert!(!err.contains("--from-plan"), "{err}");
        assert!(err.contains("CUDA"), "{err}");
    }

    plan["launches"][0]["kernel"] = "reduce".into();
    let wrong = temp("wrong.json");
    std::fs::write(&wrong, plan.to_string()).unwrap();
    let o = lab(&["run", "--from-plan", wrong.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.starts_with("error: --from-plan: reduce_v3 [nvcc]: 'reduce' names "),
        "{err}"
    );

    // The plan holds the names and the sizes: naming them again is refused.
    let o = lab(&[
        "run",
        "--from-plan",
        part.to_str().unwrap(),
        "--kernel",
        "v3",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    for f in [part, wrong] {
        std::fs::remove_file(f).unwrap();
    }
}
