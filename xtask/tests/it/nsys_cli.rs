//! `cargo xtask nsys` end to end, with a stand-in nsys answering from the H200 capture in
//! `tests/fixtures/nsys/capture/` (its README): the importer's failure as one line, and a
//! capture kept and read back. The tables and verdicts themselves: `profiler`'s tests.

use crate::harness::{self, Sandbox, last_line};
use crate::nsys_capture::capture;
use profiler::nsys::{self, csv as nsys_csv};
use std::process::Output;

/// What the importer printed on the H200 machine before libdw1 was installed.
fn importer_text() -> String {
    std::fs::read_to_string(capture().join("importer-nolibdw.txt")).unwrap()
}

/// The remedy for libdw.so.1, as the command must print it.
const REMEDY: &str = "apt-get install libdw1 (or, without root, `apt-get download libdw1 \
                      libelf1`, `dpkg -x` them and put their usr/lib/x86_64-linux-gnu on \
                      LD_LIBRARY_PATH)";

/// Answers like the H200's nsys: `profile` writes the report (or, with FAKE_NO_IMPORTER, only
/// the raw `.qdstrm` and the console of `nsys-nolibdw/nsys-launch-gap.nsys.log`, exit 0);
/// `stats` hands back `$FAKE_PREFIX_<report>.csv[.gz]` from the capture for every report asked.
const FAKE_NSYS: &str = r#"#!/bin/bash
cmd=$1; shift
out=""
if [ "$cmd" = "profile" ]; then
  while [ $# -gt 0 ]; do
    case "$1" in --output) out=$2; shift;; --*) ;; *) break;; esac
    shift
  done
  if [ -n "$FAKE_NO_IMPORTER" ]; then
    tail -n +2 "$FAKE_CAPTURE/nsys-nolibdw/nsys-launch-gap.nsys.log"
    head -c 1000000 /dev/zero > "$out.qdstrm"
    exit 0
  fi
  touch "$out.nsys-rep"
  exit 0
fi
if [ "$cmd" = "stats" ]; then
  reports=""
  while [ $# -gt 0 ]; do
    case "$1" in --output) out=$2; shift;; --report) reports=$2; shift;; esac
    shift
  done
  for r in ${reports//,/ }; do
    src="$FAKE_CAPTURE/${FAKE_PREFIX}_$r.csv"
    if [ -f "$src" ]; then cp "$src" "${out}_$r.csv"
    elif [ -f "$src.gz" ]; then gzip -dc "$src.gz" > "${out}_$r.csv"
    fi
  done
fi
"#;

/// nsys in Nsight Compute's layout, the importer answering `--version` with `importer_says`
/// and `importer_exit`, and a lab that does nothing.
fn sandbox(name: &str, importer_says: &str, importer_exit: i32) -> Sandbox {
    let importer = format!("#!/bin/bash\necho '{importer_says}' >&2\nexit {importer_exit}\n");
    let sb = Sandbox::new(
        &format!("nsys-{name}"),
        &[
            ("host/target-linux-x64/nsys", FAKE_NSYS),
            (
                "host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter",
                importer.as_str(),
            ),
            ("lab", "#!/bin/sh\n"),
        ],
    );
    std::fs::create_dir_all(sb.out()).unwrap();
    sb
}

impl Sandbox {
    fn nsys_xtask(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = harness::xtask();
        c.args(args)
            .env("NSYS", self.path("host/target-linux-x64/nsys"))
            .env("PATH", "/usr/bin:/bin")
            .env("FAKE_CAPTURE", capture())
            .env("FAKE_PREFIX", "nsys-launchgap");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn trace(&self, env: &[(&str, &str)]) -> Output {
        let lab = self.path("lab");
        let out = self.out();
        self.nsys_xtask(
            &[
                "nsys",
                "--what",
                "launch-gap",
                "--lab",
                lab.to_str().unwrap(),
                "--output",
                out.to_str().unwrap(),
            ],
            env,
        )
    }
}

/// The H200's failure replayed: nsys exits 0 with "Importer error status: An unknown error
/// occurred" and a raw `.qdstrm`; `xtask nsys` asks the importer, prints one line naming
/// libdw.so.1 and the remedy, exits non-zero, and leaves nothing temporary behind.
#[test]
fn no_report_because_the_importer_lacks_libdw_is_one_line() {
    let said = importer_text()
        .lines()
        .find(|l| l.contains("error while loading shared libraries"))
        .unwrap()
        .to_string();
    let sb = sandbox("nolibdw", &said, 127);
    let o = sb.trace(&[("FAKE_NO_IMPORTER", "1")]);
    assert!(!o.status.success());
    let importer = sb
        .dir
        .join("host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter");
    assert_eq!(
        last_line(&o),
        format!(
            "error: nsys's importer ({}) cannot load libdw.so.1: {REMEDY}",
            importer.display()
        )
    );
    assert_eq!(sb.leftovers(), Vec::<String>::new());
    // The log the message of other failures points at is kept.
    assert!(sb.out().join("nsys-launch-gap.nsys.log").is_file());
    assert!(o.stdout.is_empty());
}

/// No report although the importer runs: the log is where the reason is.
#[test]
fn no_report_with_a_working_importer_points_at_the_log() {
    let sb = sandbox("noreport", "NVIDIA Nsight Systems 36398880", 0);
    let o = sb.trace(&[("FAKE_NO_IMPORTER", "1")]);
    assert!(!o.status.success());
    let line = last_line(&o);
    assert!(line.starts_with("error: nsys wrote no report ("), "{line}");
    assert!(line.ends_with("nsys-launch-gap.nsys.log for why"), "{line}");
    assert_eq!(sb.leftovers(), Vec::<String>::new());
}

/// A capture that works: the six reports kept (the two large traces gzipped, an earlier
/// capture's copy replaced), the verdicts printed, and `--from` reading them back the same.
#[test]
fn traces_are_kept_gzipped_and_read_back_the_same() {
    let sb = sandbox("ok", "NVIDIA Nsight Systems 36398880", 0);
    let stale = sb.out().join("nsys-launch-gap_cuda_gpu_trace.csv");
    std::fs::write(&stale, "an earlier capture\n").unwrap();
    let o = sb.trace(&[]);
    assert!(o.status.success(), "{}", harness::stderr(&o));
    let text = harness::stdout(&o);
    assert!(!stale.exists());
    for r in nsys_csv::REPORTS {
        let gz = nsys_csv::GZIPPED.contains(&r);
        let kept = sb.out().join(format!(
            "nsys-launch-gap_{r}.csv{}",
            if gz { ".gz" } else { "" }
        ));
        assert!(kept.is_file(), "{}", kept.display());
    }
    let unpacked = nsys::read_report(&sb.out().join("nsys-launch-gap"), "cuda_gpu_trace")
        .unwrap()
        .unwrap();
    let original = nsys::read_report(&capture().join("nsys-launchgap"), "cuda_gpu_trace")
        .unwrap()
        .unwrap();
    assert!(unpacked == original);
    assert_eq!(sb.leftovers(), Vec::<String>::new());
    let verdicts = &text[text.find("Where the time goes").unwrap()..];
    assert!(
        verdicts.contains("kernel-lab:launch gap A: sync after each [llvm]"),
        "{verdicts}"
    );
    let prefix = sb.out().join("nsys-launch-gap");
    let again = sb.nsys_xtask(&["nsys", "--from", prefix.to_str().unwrap()], &[]);
    assert!(again.status.success());
    let again = String::from_utf8_lossy(&again.stdout).into_owned();
    assert_eq!(
        &again[again.find("Where the time goes").unwrap()..],
        verdicts
    );
}
