//! The launch gap: 1000 `bump` launches per sample three ways, to show what a launch costs
//! when the host waits after each, when launches queue back to back, and in one CUDA graph.

use super::Bench;
use crate::bench::report::{Passed, Row};
use crate::cases::bump::Bump;
use crate::cases::{Case, Verdict};
use crate::error::Result;
use crate::ffi::Graph;
use crate::nvtx::range;
use crate::timing::Samples;
use catalog::{Dtype, Family};
use std::time::Instant;

/// The launch-gap demo: this many `bump` launches of `BUMP_N` floats per sample.
pub const LAUNCHES: u32 = 1000;
pub const BUMP_N: usize = 4096;

impl Bench<'_> {
    /// 1000 `bump` launches three ways: A sync after each, B back-to-back, C one CUDA graph
    /// (captured and instantiated once, timed separately, then replayed).
    pub fn launch_gap(&mut self) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        if !plan.wants("bump") {
            return Ok(());
        }
        let size = format!("{LAUNCHES}x{BUMP_N}");
        for &b in &plan.backends {
            let row = |kernel: &str| {
                let mut r = Row::new(
                    Family::LaunchGap,
                    kernel,
                    b,
                    Dtype::F32,
                    BUMP_N as u64,
                    size.clone(),
                    0,
                );
                r.launches = LAUNCHES;
                r
            };
            let case = match Bump::new(lab, b, vec![0.0; BUMP_N]) {
                Ok(c) => c,
                Err(e) => {
                    self.record_each(row("bump_sync_each").failed(e.to_string()));
                    continue;
                }
            };
            let check = || -> Result<Verdict> {
                let m = case.verify(LAUNCHES)?;
                Ok(match m.first {
                    None => Ok(format!("every element bumped {LAUNCHES} times")),
                    Some((i, got, _)) => {
                        Err(format!("element {i} is {got} after {LAUNCHES} bumps"))
                    }
                })
            };
            let reset = || case.reset();

            {
                let _r = range(&format!("launch gap A: sync after each [{b}]"));
                self.measure(
                    row("bump_sync_each").with_note("A: synchronize after each launch"),
                    reset,
                    || {
                        for _ in 0..LAUNCHES {
                            case.launch()?;
                            lab.sync()?;
                        }
                        Ok(())
                    },
                    check,
                );
            }
            {
                let _r = range(&format!("launch gap B: back-to-back [{b}]"));
                self.measure(
                    row("bump_back_to_back").with_note("B: one stream, one synchronize"),
                    reset,
                    || (0..LAUNCHES).try_for_each(|_| case.launch()),
                    check,
                );
            }
            {
                let _r = range(&format!("launch gap C: CUDA graph [{b}]"));
                let t0 = Instant::now();
                let graph = {
                    let _r = range(&format!("launch gap C: capture + instantiate [{b}]"));
                    Graph::capture(&lab.stream, || {
                        (0..LAUNCHES).try_for_each(|_| case.launch())
                    })
                };
                let capture_ms = t0.elapsed().as_secs_f64() * 1e3;
                let mut cap = row("bump_graph_capture");
                cap.launches = 1;
                let graph = match graph {
                    Ok(g) => {
                        let note = format!(
                            "C: capture + instantiate {LAUNCHES} launches, once (host clock)"
                        );
                        self.record_each(cap.passed(&Samples::new(vec![capture_ms]), note));
                        g
                    }
                    Err(e) => {
                        self.record_each(cap.failed(e.to_string()));
                        continue;
                    }
                };
                self.measure(
                    row("bump_graph").with_note("C: one graph launch replays all"),
                    reset,
                    || graph.launch(&lab.stream),
                    check,
                );
            }
        }
        Ok(())
    }
}
