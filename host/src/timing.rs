//! CUDA-event timing: warm-up launches first, then one event pair around every timed launch
//! (whatever resets the output runs before the start event, outside the timed region).

use crate::error::{Ctx, Result};
use cust::event::{Event, EventFlags};
use cust::stream::Stream;

/// Per-launch times of one measurement, in milliseconds, sorted ascending.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Samples {
    pub ms: Vec<f64>,
}

impl Samples {
    pub fn new(mut ms: Vec<f64>) -> Samples {
        assert!(!ms.is_empty(), "a measurement needs at least one sample");
        ms.sort_by(f64::total_cmp);
        Samples { ms }
    }
    pub fn median(&self) -> f64 {
        let n = self.ms.len();
        if n % 2 == 1 {
            self.ms[n / 2]
        } else {
            (self.ms[n / 2 - 1] + self.ms[n / 2]) / 2.0
        }
    }
    pub fn min(&self) -> f64 {
        self.ms[0]
    }
    pub fn max(&self) -> f64 {
        self.ms[self.ms.len() - 1]
    }
    /// (max − min) / median.
    pub fn spread(&self) -> f64 {
        (self.max() - self.min()) / self.median()
    }
}

/// Times `launch` `reps` times on `stream` after `warmup` untimed runs; `reset` runs before
/// every launch (warm-up included) and is not timed.
pub fn time_launches(
    stream: &Stream,
    warmup: usize,
    reps: usize,
    mut reset: impl FnMut() -> Result<()>,
    mut launch: impl FnMut() -> Result<()>,
) -> Result<Samples> {
    let start = Event::new(EventFlags::DEFAULT).ctx(|| "creating an event".into())?;
    let stop = Event::new(EventFlags::DEFAULT).ctx(|| "creating an event".into())?;
    for _ in 0..warmup {
        reset()?;
        launch()?;
    }
    let mut ms = Vec::with_capacity(reps);
    for _ in 0..reps {
        reset()?;
        start.record(stream).ctx(|| "recording an event".into())?;
        launch()?;
        stop.record(stream).ctx(|| "recording an event".into())?;
        stop.synchronize()
            .ctx(|| "waiting for the timed launch".into())?;
        ms.push(
            stop.elapsed_time_f32(&start)
                .ctx(|| "reading event time".into())? as f64,
        );
    }
    Ok(Samples::new(ms))
}
