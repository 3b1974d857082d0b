//! Every bench results file kept under `results/` (and the tests' copies under
//! `xtask/tests/fixtures/bench/`; `.json`, or `.json.gz` gunzipped) reads through
//! `catalog::records::Report`, and
//! one written after the last field was added comes out byte for byte as it went in: the
//! records are the schema the files were written with (a file from before `cache` existed
//! gains that field, one from before the model's prediction its three row fields, one from
//! before a row's occupancy its `resident`, and nothing else). (Floats are parsed exactly: serde_json's
//! `float_roundtrip`.)
//!
//! The same for `lab run`'s manifests kept there and in `xtask/tests/fixtures/ncu/`
//! (`*.launches.json`, `manifest.json`): their plan and their launches read into the typed
//! records and write back as the same JSON, every family, runner and backend spelled as it was.

use catalog::records::{Launched, Plan, Planned, Report, SCHEMA_VERSION};
use catalog::{Backend, Dtype, Family, Runner};
use std::path::{Path, PathBuf};

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.to_string_lossy().ends_with(".json")
            || p.to_string_lossy().ends_with(".json.gz")
        {
            out.push(p);
        }
    }
}

/// A file's text, gunzipped when it ends in `.gz`.
fn text_of(f: &Path) -> String {
    let bytes = std::fs::read(f).unwrap();
    if f.extension().is_some_and(|x| x == "gz") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
            .unwrap();
        return text;
    }
    String::from_utf8(bytes).unwrap()
}

#[test]
fn every_kept_results_file_reads_and_the_newest_write_back_unchanged() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results");
    let mut files = Vec::new();
    json_files(&root, &mut files);
    json_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../xtask/tests/fixtures/bench"),
        &mut files,
    );
    let (mut read, mut identical) = (0, 0);
    for f in files {
        let text = text_of(&f);
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if v["tool"] != "lab bench" {
            continue;
        }
        let r: Report =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(r.schema_version, SCHEMA_VERSION, "{}", f.display());
        assert!(!r.rows.is_empty(), "{}", f.display());
        read += 1;
        // Files from before `flops` existed gain it when written back; the rest are unchanged.
        let complete = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|row| row.get("flops").is_some());
        if complete {
            let mut back = serde_json::to_string_pretty(&r).unwrap() + "\n";
            // Files from before the cache was a choice gain `"cache": "hot"` (config and rows,
            // each on its own line, never an object's last): all else must come back as it was.
            if !text.contains("\"cache\"") {
                back = back
                    .lines()
                    .filter(|l| l.trim() != r#""cache": "hot","#)
                    .map(|l| format!("{l}\n"))
                    .collect();
            }
            // Files from before the model's prediction gain its three row fields, null.
            if !text.contains("\"predicted_us\"") {
                const UNPREDICTED: [&str; 3] = [
                    r#""bound": null,"#,
                    r#""predicted_us": null,"#,
                    r#""pct_of_bound": null,"#,
                ];
                back = back
                    .lines()
                    .filter(|l| !UNPREDICTED.contains(&l.trim()))
                    .map(|l| format!("{l}\n"))
                    .collect();
            }
            // Files from before the i32 chain and the tile order were roofs gain them, null.
            for field in ["atomic_same_i32_ns", "tile_copy_bytes_per_s"] {
                if !text.contains(&format!("\"{field}\"")) {
                    back = back
                        .lines()
                        .filter(|l| !l.trim().starts_with(&format!("\"{field}\": null")))
                        .map(|l| format!("{l}\n"))
                        .collect();
                }
            }
            // Files from before a row could state its occupancy gain `"resident": null`.
            if !text.contains("\"resident\"") {
                back = back
                    .lines()
                    .filter(|l| l.trim() != r#""resident": null,"#)
                    .map(|l| format!("{l}\n"))
                    .collect();
            }
            assert!(back == text, "{} changes when written back", f.display());
            identical += 1;
        }
    }
    assert!(read > 0, "no bench results file under {}", root.display());
    assert!(identical > 0, "no results file with every field");
}

/// Every manifest of a `lab run` kept in the tree: `*.launches.json` and `manifest.json`.
fn manifests() -> Vec<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    json_files(&here.join("../results"), &mut files);
    json_files(&here.join("../xtask/tests/fixtures"), &mut files);
    files.retain(|f| {
        let name = f.file_name().unwrap().to_string_lossy();
        name.ends_with(".launches.json") || name == "manifest.json"
    });
    files
}

#[test]
fn every_kept_manifest_reads_into_the_records_and_writes_back_its_spellings() {
    let files = manifests();
    assert!(files.len() > 5, "{files:?}");
    let mut families = Vec::new();
    for f in &files {
        let v: serde_json::Value = serde_json::from_str(&text_of(f)).unwrap();
        let plan: Plan = round_trip(&v["plan"], &format!("{}: plan", f.display()));
        let _: Vec<Launched> = round_trip(&v["launches"], &format!("{}: launches", f.display()));
        families.extend(plan.launches.iter().map(|p| p.family));
    }
    // The plan's own spellings: `reduction` is the bench's `reduce`.
    assert!(families.contains(&catalog::Family::Reduce));
    assert!(families.contains(&catalog::Family::Transpose));
}

/// The vocabulary as the files spell it: runners, element types, families (the bench's and the
/// plan's).
#[test]
fn the_vocabulary_keeps_the_files_spellings() {
    let names = |v: serde_json::Value| v.as_str().unwrap().to_string();
    let runners: Vec<String> = Runner::ALL
        .iter()
        .map(|r| names(serde_json::to_value(r).unwrap()))
        .collect();
    assert_eq!(runners, ["llvm", "nvvm", "nvcc", "cub", "driver"]);
    let dtypes: Vec<String> = Dtype::ALL
        .iter()
        .map(|d| names(serde_json::to_value(d).unwrap()))
        .collect();
    assert_eq!(dtypes, ["f32", "i32", "u32", "bf16"]);
    let families: Vec<String> = Family::ALL
        .iter()
        .map(|f| names(serde_json::to_value(f).unwrap()))
        .collect();
    assert_eq!(
        families,
        [
            "ceiling",
            "reduce",
            "transpose",
            "launch_gap",
            "faults",
            "rows"
        ]
    );
    let planned: Vec<&str> = Family::ALL.iter().map(|f| f.plan_name()).collect();
    assert_eq!(
        planned,
        [
            "ceiling",
            "reduction",
            "transpose",
            "bump",
            "fault",
            "rowwise"
        ]
    );
    for r in Runner::ALL {
        assert_eq!(r.name().parse::<Runner>(), Ok(r));
        let back: Runner = serde_json::from_value(serde_json::to_value(r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
    assert_eq!(Runner::of(None), Runner::Cub);
    assert_eq!(
        Runner::of(Some(Backend::Nvvm)).backend(),
        Some(Backend::Nvvm)
    );
}

/// A planned launch spells its family the plan's way and its runner by name; both read
/// back, and the bench's family names read too.
#[test]
fn a_planned_launch_keeps_its_spellings() {
    for family in Family::ALL {
        let p = Planned {
            label: "k [cub]".into(),
            kernel: "k".into(),
            entry: "k".into(),
            family,
            backend: Runner::Cub,
            elements: 1,
            launches: 1,
        };
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["family"], family.plan_name());
        assert_eq!(v["backend"], "cub");
        assert_eq!(serde_json::from_value::<Planned>(v).unwrap(), p);
    }
    let bench = r#"{"label": "b", "kernel": "b", "entry": "b", "family": "launch_gap",
        "backend": "nvcc", "elements": 1}"#;
    let p: Planned = serde_json::from_str(bench).unwrap();
    assert_eq!(
        (p.family, p.backend),
        (Family::LaunchGap, Backend::Nvcc.into())
    );
    let odd = r#"{"label": "b", "kernel": "b", "entry": "b", "family": "bump",
        "backend": "gcc", "elements": 1}"#;
    let e = serde_json::from_str::<Planned>(odd)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown runner 'gcc'"), "{e}");
}

/// `v` read into a `T` and written back unchanged (`what` names it in a failure).
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(
    v: &serde_json::Value,
    what: &str,
) -> T {
    let t: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(
        &serde_json::to_value(&t).unwrap(),
        v,
        "{what}: changes when written back"
    );
    t
}
