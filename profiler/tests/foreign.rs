//! The diagnosis on kernels the lab did not build, from real H200 captures
//! (`tests/fixtures/h200/`, made by `gpu/foreign.sh`).

use profiler::diagnose::diagnose;
use profiler::ncu::{Launch, parse_raw};
use std::io::Read;

fn page(name: &str) -> Vec<Launch> {
    let path = format!(
        "{}/tests/fixtures/h200/{name}.raw.csv.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    parse_raw(&text).unwrap()
}

#[test]
fn print_all() {
    for name in ["faults", "torch", "torch-plain"] {
        for l in page(name) {
            let d = diagnose(&l);
            println!("\n== {} {}", name, profiler::names::short(&l.kernel));
            println!("  {}", d.headline);
            for f in &d.findings {
                println!(
                    "   [{}] {:?} cost {:?} w {:?}: {} | {}",
                    f.rule, f.kind, f.cost, f.weight, f.verdict, f.evidence
                );
            }
            for f in &d.negligible {
                println!("   (negligible [{}] {:?}: {})", f.rule, f.cost, f.verdict);
            }
            println!("   silent: {:?}", d.silent);
        }
    }
}
