//! Every bench results file kept under `results/` (and the tests' copies under
//! `xtask/tests/fixtures/bench/`; `.json`, or `.json.gz` gunzipped) reads through
//! `catalog::records::Report`, and
//! one written after the last field was added comes out byte for byte as it went in: the
//! records are the schema the files were written with (a file from before `cache` existed
//! gains that field, one from before the model's prediction its three row fields, one from
//! before a row's occupancy its `resident`, and nothing else). (Floats are parsed exactly: serde_json's
//! `float_roundtrip`.)

use catalog::records::{Report, SCHEMA_VERSION};
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
