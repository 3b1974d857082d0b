use super::*;
use crate::process::{Outcome, PIPE_GRACE, TimedOut, output_within};
use std::time::{Duration, Instant};

#[test]
fn findings_are_matched_to_listed_kernels() {
    assert!(same_kernel("reduce_v3_f32", "reduce_v3"));
    assert!(same_kernel("reduce_v3_i32", "reduce_v3_i32"));
    assert!(!same_kernel("reduce_v3_i32", "reduce_v3"));
    assert!(same_kernel(
        "n=257 offset=0 1000x777",
        "n=257 offset=0 1000x777"
    ));
    assert!(!same_kernel("transpose_padded_f32", "transpose_pad"));
}

#[test]
fn clean_output_has_no_findings() {
    let text =
        "========= COMPUTE-SANITIZER\nreduce_v1 [llvm] ok\n========= ERROR SUMMARY: 0 errors\n";
    assert!(parse_findings(text).is_empty());
}

#[test]
fn memcheck_error_is_attributed_to_its_kernel() {
    let text = "========= COMPUTE-SANITIZER\n\
        ========= Invalid __global__ read of size 4 bytes\n\
        =========     at reduce_v6_f32+0x1b0\n\
        =========     by thread (3,0,0) in block (0,0,0)\n\
        ========= Invalid __global__ read of size 4 bytes\n\
        =========     at reduce_v6_f32+0x1b0\n\
        ========= Barrier error detected. Divergent thread(s) in warp\n\
        =========     at reduce_v3_f32+0x90 in reduce.rs:170\n\
        ========= ERROR SUMMARY: 3 errors\n";
    let f = parse_findings(text);
    assert_eq!(f.len(), 2);
    assert_eq!(
        f[0],
        Finding {
            kernel: "reduce_v6_f32".into(),
            message: "Invalid __global__ read of size 4 bytes".into()
        }
    );
    assert_eq!(f[1].kernel, "reduce_v3_f32");
}

/// Clean runs' output as compute-sanitizer printed it on the H200 (CUDA 13.0), lines taken
/// from results/sanitize/54d9599/sanitize.log.gz: memcheck adds a leak summary, racecheck closes with
/// its own summary instead of `ERROR SUMMARY`.
const CLEAN_MEMCHECK: &str = "========= COMPUTE-SANITIZER\n\
    bump [nvcc]              grid 1×1  block 256×1  smem 0 B  ok (0 of 1 elements are not start + 1)\n\
    ========= LEAK SUMMARY: 0 bytes leaked in 0 allocations\n\
    ========= ERROR SUMMARY: 0 errors\n";
const CLEAN_RACECHECK: &str = "========= COMPUTE-SANITIZER\n\
    cub_i32 [cub]            launch chosen by the library  ok (exact)\n\
    ========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";
const CLEAN_SYNCCHECK: &str = "========= COMPUTE-SANITIZER\n\
    cub_i32 [cub]            launch chosen by the library  ok (exact)\n\
    ========= ERROR SUMMARY: 0 errors\n";

// The canaries' reports as compute-sanitizer printed them on the H200, trimmed of their host
// backtraces (tests/fixtures/sanitize/README.md says where they come from).
const FLAGGED_MEMCHECK: &str =
    include_str!("../../../xtask/tests/fixtures/sanitize/canary-memcheck.txt");
const FLAGGED_RACECHECK: &str =
    include_str!("../../../xtask/tests/fixtures/sanitize/canary-racecheck.txt");
const FLAGGED_SYNCCHECK: &str =
    include_str!("../../../xtask/tests/fixtures/sanitize/canary-synccheck.txt");
const FLAGGED_INITCHECK: &str =
    include_str!("../../../xtask/tests/fixtures/sanitize/canary-initcheck.txt");

/// A fault synccheck does not report, as the H200 printed it: `canary_divergent_barrier`, a
/// `bar.sync` that threads 16..64 skip by exiting (on sm_70+ exited threads release it).
const CLEAN_SYNCCHECK_CANARY: &str = r#"========= COMPUTE-SANITIZER
canary: canary_divergent_barrier ran; it is wrong on purpose, for compute-sanitizer to flag
========= ERROR SUMMARY: 0 errors
"#;

/// `text` with `from` replaced, which it must contain (a replacement that matches nothing
/// would leave the test checking the unchanged text).
fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} is not in {text:?}");
    text.replace(from, to)
}

fn canary(tool: &str) -> &'static Canary {
    CANARIES.iter().find(|c| c.tool == tool).unwrap()
}

fn ran(code: i32, text: &str) -> Outcome {
    Ok((code, text.to_string()))
}

#[test]
fn every_tool_has_one_canary() {
    assert_eq!(CANARIES.map(|c| c.tool), TOOLS);
}

#[test]
fn summaries_are_read_from_real_clean_runs() {
    let none = Some(Summary::default());
    assert_eq!(parse_summary(CLEAN_MEMCHECK), none);
    assert_eq!(parse_summary(CLEAN_RACECHECK), none);
    assert_eq!(parse_summary(CLEAN_SYNCCHECK), none);
    assert_eq!(parse_summary(CLEAN_SYNCCHECK_CANARY), none);
    assert_eq!(parse_summary("error: no CUDA device found\n"), None);
}

#[test]
fn summaries_count_errors_and_racecheck_warnings() {
    let s = |errors, warnings| Some(Summary { errors, warnings });
    assert_eq!(parse_summary(FLAGGED_MEMCHECK), s(9, 0));
    assert_eq!(parse_summary(FLAGGED_RACECHECK), s(1, 0));
    assert_eq!(parse_summary(FLAGGED_INITCHECK), s(256, 0));
    assert_eq!(parse_summary(FLAGGED_SYNCCHECK), s(17, 0));
    assert_eq!(
        parse_summary("========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)\n"),
        s(0, 3)
    );
}

#[test]
fn each_canary_is_flagged_wherever_the_report_places_it() {
    for (tool, code, text, counted, message) in [
        (
            "memcheck",
            86,
            FLAGGED_MEMCHECK,
            "9 errors",
            "Invalid __global__ write of size 4 bytes",
        ),
        (
            "racecheck",
            0,
            FLAGGED_RACECHECK,
            "1 error",
            "Error: Race reported between Write access",
        ),
        (
            "synccheck",
            86,
            FLAGGED_SYNCCHECK,
            "17 errors",
            "Barrier error detected. Invalid arguments.",
        ),
        (
            "initcheck",
            86,
            FLAGGED_INITCHECK,
            "256 errors",
            "Uninitialized __global__ memory read of size 4 bytes",
        ),
    ] {
        let c = canary(tool);
        let row = judge_canary(c, &ran(code, text));
        assert!(row.flagged, "{}", row.line);
        assert_eq!(
            row.line,
            format!(
                "canary {tool}: flagged ({counted}) — expected ({}: {message})",
                c.kernel
            )
        );
    }
    // A count with no error line this command recognises is still the canary's.
    let text = "canary: canary_warp_sync_mask ran\n========= ERROR SUMMARY: 1 error\n";
    let row = judge_canary(canary("synccheck"), &ran(86, text));
    assert!(row.flagged, "{}", row.line);
    assert_eq!(
        row.line,
        "canary synccheck: flagged (1 error) — expected (canary_warp_sync_mask)"
    );
    // The synccheck canary may also finish and report that it ran, as racecheck's does.
    let text = replaced(
        FLAGGED_SYNCCHECK,
        "error: running canary_warp_sync_mask failed: \"unspecified launch failure\": \"unspecified launch failure\"",
        "canary: canary_warp_sync_mask ran; it is wrong on purpose, for compute-sanitizer to flag",
    );
    assert!(judge_canary(canary("synccheck"), &ran(86, &text)).flagged);
}

#[test]
fn a_clean_canary_fails_sanitize_and_is_named() {
    let barrier = Canary {
        tool: "synccheck",
        kernel: "canary_divergent_barrier",
        fault: "a barrier in divergent code",
    };
    let rows = [
        judge_canary(canary("memcheck"), &ran(86, FLAGGED_MEMCHECK)),
        judge_canary(canary("racecheck"), &ran(0, FLAGGED_RACECHECK)),
        judge_canary(&barrier, &ran(0, CLEAN_SYNCCHECK_CANARY)),
        judge_canary(canary("initcheck"), &ran(86, FLAGGED_INITCHECK)),
    ];
    let e = check_canaries(&rows, Path::new("results/sanitize/f34100d/canaries.log.gz"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "canary synccheck came back clean: synccheck did not flag canary_divergent_barrier (a barrier in divergent code), so its clean results would prove nothing (see results/sanitize/f34100d/canaries.log.gz)"
    );
    assert!(check_canaries(&rows[..2], Path::new("x")).is_ok());
}

#[test]
fn errors_outside_a_run_of_the_canary_do_not_flag_it() {
    // Counted in a run of another kernel.
    let row = judge_canary(canary("synccheck"), &ran(86, FLAGGED_RACECHECK));
    assert!(!row.flagged);
    assert_eq!(
        row.line,
        "canary synccheck: the canary run itself failed (exit 86): ========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"
    );
    let text = replaced(FLAGGED_SYNCCHECK, "_mask failed", "_mask_v2 failed");
    let row = judge_canary(canary("synccheck"), &ran(0, &text));
    assert!(!row.flagged);
    assert!(
        row.line.starts_with(
            "canary synccheck: `lab canary synccheck` did not report running canary_warp_sync_mask: "
        ),
        "{}",
        row.line
    );
    // The launch failed with only host-side errors counted: it failed on its own.
    let text = "========= COMPUTE-SANITIZER\n\
        ========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuLaunchKernel.\n\
        =========     Saved host backtrace up to driver entry point at error\n\
        ========= ERROR SUMMARY: 1 error\n\
        error: running canary_oob_write failed: \"invalid argument\"\n";
    let row = judge_canary(canary("memcheck"), &ran(86, text));
    assert!(!row.flagged);
    assert_eq!(
        row.line,
        "canary memcheck: the canary run itself failed (exit 86): error: running canary_oob_write failed: \"invalid argument\""
    );
    // The lab failed before the kernel ran: no error counted, a non-zero exit.
    let text = "========= COMPUTE-SANITIZER\nerror: no CUDA device found (the driver loaded but reports none): run on a machine with an NVIDIA GPU\n========= ERROR SUMMARY: 0 errors\n";
    let row = judge_canary(canary("initcheck"), &ran(1, text));
    assert!(!row.flagged);
    assert!(
        row.line
            .starts_with("canary initcheck: the canary run itself failed (exit 1): "),
        "{}",
        row.line
    );
}

#[test]
fn a_canary_without_a_readable_summary_or_an_end_fails() {
    let row = judge_canary(
        canary("memcheck"),
        &ran(1, "compute-sanitizer: error: target not found\n"),
    );
    assert!(!row.flagged);
    assert_eq!(
        row.line,
        "canary memcheck: compute-sanitizer printed no summary (exit 1): compute-sanitizer: error: target not found"
    );
    let row = judge_canary(canary("memcheck"), &Err(anyhow::anyhow!("starting x")));
    assert_eq!(row.line, "canary memcheck could not run: starting x");
    let hung = TimedOut {
        limit: CANARY_LIMIT,
        text: "========= COMPUTE-SANITIZER\n".into(),
    };
    let row = judge_canary(canary("synccheck"), &Err(hung.into()));
    assert!(!row.flagged);
    assert_eq!(row.line, "canary synccheck did not finish in 60 s");
}

#[test]
fn a_run_past_its_limit_is_stopped_with_its_whole_group() {
    // The shell's `sleep` is a child of its own that holds the output pipe: unless the
    // whole group is killed, reading the output waits for the sleep (or PIPE_GRACE).
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "echo started; sleep 30; echo never"]);
    let start = Instant::now();
    let e = output_within(&mut cmd, Duration::from_millis(300)).unwrap_err();
    let waited = start.elapsed();
    let t = e.downcast_ref::<TimedOut>().expect("a TimedOut");
    assert_eq!(t.text, "started\n");
    assert!(waited < PIPE_GRACE, "{waited:?}");
    // A run that ends in time comes back whole, stdout then stderr, with its exit code.
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
    let (code, text) = output_within(&mut cmd, Duration::from_secs(10)).unwrap();
    assert_eq!((code, text.as_str()), (3, "out\nerr\n"));
}

#[test]
fn cub_kernels_and_host_errors_are_named() {
    let text = "========= Error: Race reported between Write access at void cub::DeviceReduceKernel<int>(int*)+0x10\n\
        =========     at void cub::DeviceReduceKernel<int>(int*)+0x10\n\
        ========= Leaked 4 bytes at 0x7f0000000000\n";
    let f = parse_findings(text);
    assert_eq!(f[0].kernel, "cub");
    assert_eq!(f[1].kernel, "(host)");
}
