//! `profile -- PROGRAM [ARGS…]` and `profile --report FILE.ncu-rep`: kernels this lab did not
//! build, diagnosed by the profiler crate's rules (which know no catalogue), printed and
//! written as `profile` writes the lab's own: text, JSON and CSV under the output folder.

use super::attribution;
use super::ncu::emit;
use anyhow::{Context, Result, bail};
use catalog::Format;
use profiler::document::{Document, Entry};
use profiler::ncu::run::{self, KernelBase, Settings};
use profiler::ncu::{Launch, Value, parse_raw};
use profiler::program::{self, Kernel};
use profiler::source::{self, KernelSource};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where the outputs go and what is printed.
pub struct Output {
    /// Folder for the report, its pages and the summary; None: write nothing (a report read
    /// back without `--output`).
    pub dir: Option<PathBuf>,
    pub format: Format,
    /// Also each kernel's hottest source lines (or SASS), from the report's Source page.
    pub source: bool,
    /// Every SASS instruction under its line, not just the hottest three.
    pub all_sass: bool,
}

/// A name for the capture's files from the program: its script for an interpreter
/// (`python3 train.py` → `profile-train`), else the program's own name.
pub fn capture_name(program: &[String]) -> String {
    let interpreters = ["python", "python3", "bash", "sh", "env"];
    let first = program.first().map(|p| base(p)).unwrap_or_default();
    let shown = if interpreters.iter().any(|i| first.starts_with(i)) {
        program
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .map(|a| base(a))
            .unwrap_or(first)
    } else {
        first
    };
    let clean: String = shown
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("profile-{clean}")
}

/// The file name without folder and extension.
fn base(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .map_or(path.to_string(), |s| s.to_string_lossy().into_owned())
}

/// Runs `program` under ncu with `settings`, then diagnoses every launch it profiled.
pub fn profile_program(settings: &Settings, program: &[String], out: &Output) -> Result<()> {
    let Some((exe, args)) = program.split_first() else {
        bail!("no program after --: cargo xtask profile -- PROGRAM [ARGS…]");
    };
    crate::util::require_cuda_driver()?;
    let dir = out
        .dir
        .clone()
        .unwrap_or_else(|| crate::util::root().join("results/profile"));
    let name = capture_name(program);
    let args: Vec<OsString> = args.iter().map(Into::into).collect();
    let settings = Settings {
        source: settings.source || out.source,
        ..settings.clone()
    };
    let cap = run::capture(
        &settings,
        &dir,
        &name,
        exe.as_ref(),
        &args,
        KernelBase::Demangled,
    )?;
    if !cap.status.success() {
        eprintln!(
            "warning: the program exited with {} under ncu; its profiled launches are kept",
            cap.status
        );
    }
    let how = format!(
        "{} under {} ({}), --set {}, --clock-control {}, --cache-control {}{}; report {}",
        program.join(" "),
        settings.ncu.display(),
        crate::util::tool_version(&settings.ncu),
        settings.collect.set.map_or("(none)", |s| s.name()),
        settings.clock_control.name(),
        settings.cache_control.name(),
        filters(&settings.filter),
        cap.report.display()
    );
    let stem = dir.join(&name);
    finish(cap.launches, &how, Some(&stem), &name, out)
}

/// A report made elsewhere (another machine, the GUI, a plain `ncu -o`): its raw page
/// imported with this machine's ncu, then diagnosed.
pub fn profile_report(report: &Path, out: &Output) -> Result<()> {
    if !report.is_file() {
        bail!("no report at {}", report.display());
    }
    let ncu = profiler::tools::NCU.find().context(
        "reading a .ncu-rep needs ncu; elsewhere, export its raw page \
         (ncu --import FILE.ncu-rep --page raw --csv --print-units base > FILE.raw.csv) \
         and read that with --from",
    )?;
    let text = run::import_raw(&ncu, report, KernelBase::Demangled)?;
    let launches =
        parse_raw(&text).with_context(|| format!("parsing {}'s raw page", report.display()))?;
    let name = format!(
        "profile-{}",
        report
            .file_stem()
            .map_or("report".into(), |s| s.to_string_lossy().into_owned())
    );
    // The Source page, when asked for, beside where the summary goes.
    let stem = match (&out.dir, out.source) {
        (Some(dir), true) => {
            std::fs::create_dir_all(dir)?;
            for (page, print) in [(run::SASS_PAGE, "sass"), (run::CUDA_PAGE, "cuda,sass")] {
                let page_text = run::import_source(&ncu, report, print)?;
                files::write_atomic(&run::file(dir, &name, page), page_text.as_bytes())?;
            }
            Some(dir.join(&name))
        }
        _ => None,
    };
    if let Some(dir) = &out.dir {
        std::fs::create_dir_all(dir)?;
        files::write_atomic(&run::file(dir, &name, "raw.csv"), text.as_bytes())?;
    }
    let how = format!("read from {} with {}", report.display(), ncu.display());
    finish(launches, &how, stem.as_deref(), &name, out)
}

/// Raw pages of programs' captures read back (`--from`).
pub fn profile_pages(pages: &[PathBuf], out: &Output) -> Result<()> {
    let mut launches = Vec::new();
    for p in pages {
        let text = super::capture::read_text(p)?;
        launches.extend(parse_raw(&text).with_context(|| format!("parsing {}", p.display()))?);
    }
    let files: Vec<String> = pages.iter().map(|p| p.display().to_string()).collect();
    let stem = (pages.len() == 1).then(|| super::capture::stem(&pages[0]).0);
    finish(
        launches,
        &format!("read back from {}", files.join(", ")),
        stem.as_deref(),
        "profile-read-back",
        out,
    )
}

/// Diagnoses, prints and (where there is a folder) writes `<name>.{txt,json,csv}`.
fn finish(
    launches: Vec<Launch>,
    how: &str,
    stem: Option<&Path>,
    name: &str,
    out: &Output,
) -> Result<()> {
    if launches.is_empty() {
        bail!("the report holds no profiled kernel");
    }
    let mut kernels = program::diagnose_all(launches);
    let sources: Vec<Option<KernelSource>> = match (out.source, stem) {
        (true, Some(stem)) => {
            let read = source::read(stem, "program", &attribution::lab(), false)
                .map_err(|e| format!("{e:#}"));
            kernels
                .iter_mut()
                .map(|k| {
                    let function = profiler::names::function(&k.name);
                    let ks = read
                        .as_ref()
                        .ok()
                        .and_then(|ks| ks.iter().find(|s| s.function == function).cloned());
                    if let Some(s) = &ks {
                        source::locate::locate(&k.launch, &mut k.diagnosis, s);
                    }
                    ks
                })
                .collect()
        }
        _ => kernels.iter().map(|_| None).collect(),
    };
    let mut text = program::text(&kernels, how);
    if out.source {
        for (k, s) in kernels.iter().zip(&sources) {
            text += &format!("\n== {} (source)\n", k.short);
            match s {
                Some(s) => text += &source::kernel_text(s, out.all_sass),
                None => text += "  Source lines     none: the report has no Source page for it\n",
            }
        }
    }
    let entries = kernels
        .iter()
        .zip(&sources)
        .map(|(k, s)| Entry {
            source: s.as_ref(),
            ..Entry::new(&k.launch, &k.short, &k.diagnosis)
        })
        .collect();
    let json = Document::new(how, entries).to_json();
    let csv = long_csv(&kernels)?;
    emit(out.dir.as_deref(), name, out.format, &text, &json, &csv)
}

/// One line per (kernel, metric).
fn long_csv(kernels: &[Kernel]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["id", "kernel", "metric", "value", "unit"])?;
    for k in kernels {
        for (name, v) in &k.launch.metrics {
            let value = match v {
                Value::Num(x) => x.to_string(),
                Value::Text(t) => t.clone(),
            };
            let unit = k.launch.units.get(name).map(String::as_str).unwrap_or("");
            w.write_record([k.id.to_string().as_str(), &k.short, name, &value, unit])?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The filters in words, for the header line.
fn filters(f: &run::Filter) -> String {
    let a = f.args();
    if a.is_empty() {
        String::new()
    } else {
        format!(", {}", a.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_are_named_after_the_script_or_the_program() {
        let n = |p: &[&str]| capture_name(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            n(&["python3", "-u", "gpu/torch_lab.py", "--warmup", "3"]),
            "profile-torch_lab"
        );
        assert_eq!(n(&["./dist/faults_lab", "20"]), "profile-faults_lab");
        assert_eq!(n(&["/usr/bin/env", "python3"]), "profile-python3");
    }
}
