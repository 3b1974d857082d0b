//! `lab`: runs the lab's kernels on this machine's GPU.
use anyhow::Result;
use clap::Parser;

#[derive(Parser)]
#[command(name = "lab", about = "Runs the kernel lab's kernels on the GPU")]
enum Cmd {
    /// Print the GPU and the backends built into this binary
    Info,
}

fn main() {
    if let Err(e) = run(Cmd::parse()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Info => {
            let lab = host::Lab::new()?;
            println!("{}", serde_json::to_string_pretty(&lab.info)?);
            println!("backends: {:?}", lab.backends());
        }
    }
    Ok(())
}
