//! Diagnoses every launch of ncu raw pages (`--page raw --csv`, optionally gzipped) and prints
//! one line per launch: `cargo run -p profiler --example diagnose_raw -- PAGE.csv[.gz]...`.

use std::io::Read;

fn main() -> anyhow::Result<()> {
    for path in std::env::args().skip(1) {
        let mut text = String::new();
        let file = std::fs::File::open(&path)?;
        if path.ends_with(".gz") {
            flate2::read::GzDecoder::new(file).read_to_string(&mut text)?;
        } else {
            std::io::BufReader::new(file).read_to_string(&mut text)?;
        }
        let kernels = profiler::program::diagnose_all(profiler::ncu::parse_raw(&text)?);
        println!("# {path}");
        for k in &kernels {
            println!(
                "{:>3} {:<40} {}",
                k.id,
                k.short.chars().take(40).collect::<String>(),
                k.diagnosis.headline
            );
            if std::env::var_os("FINDINGS").is_some() {
                print!("{}", profiler::report::findings_text(&k.diagnosis));
            }
        }
    }
    Ok(())
}
