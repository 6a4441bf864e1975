//! The steps running on this machine now, and their numbers: what `stepmon
//! top` shows (Linux only). [`find`] lists them by their run directories
//! ([`RunningStep`]); [`RunningSteps::refresh`] reads each one's cgroups
//! (the same probe as its recorder: v2, and v1 where v2 lacks a
//! controller) and differences the reading against the previous refresh's
//! for its rates ([`stepmon_model::progress::Rates`]): call it twice, a
//! second apart, for the first rates.
//!
//! ```
//! # #[cfg(target_os = "linux")] {
//! use stepmon_runner::admin::running::RunningSteps;
//!
//! let mut steps = RunningSteps::new();
//! let _first = steps.refresh(); // readings to difference against
//! std::thread::sleep(std::time::Duration::from_millis(100));
//! for now in steps.refresh() {
//!     let cores = now.rates.and_then(|r| r.cpu_cores);
//!     println!("{} {cores:?}", now.step.run);
//! }
//! # }
//! ```

mod find;

use std::collections::BTreeMap;

pub use find::{RunningStep, find};
use jiff::Timestamp;
use stepmon_model::progress::Rates;
use stepmon_model::sample::StepSample;
use stepmon_sampler::{NetworkSource, Probe as _, StepProbe, Tick};

/// One running step as one refresh read it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StepNow {
    /// The step.
    pub step: RunningStep,
    /// Its cgroups now (what is absent says why in `stepmon.missing`).
    pub sample: StepSample,
    /// Since the previous refresh (`None` at its first).
    pub rates: Option<Rates>,
    /// Seconds since its directory was made.
    pub elapsed_seconds: Option<f64>,
}

/// A step's probe and its last reading, kept across refreshes.
#[derive(Debug)]
struct Reader {
    probe: StepProbe,
    last: Option<StepSample>,
}

/// The running steps, read again at each [`RunningSteps::refresh`]; the
/// probes of steps still running are kept open between refreshes.
#[derive(Debug, Default)]
pub struct RunningSteps {
    readers: BTreeMap<String, Reader>,
}

/// The step's probe: its cgroup v2 directory (if it has one) and its v1
/// directories, without its network (a step's namespace is not found from
/// outside it).
fn probe_of(step: &RunningStep) -> StepProbe {
    let network = NetworkSource::SharedNamespace;
    let probe = step.cgroup.as_deref().and_then(|dir| StepProbe::open(dir, &network).ok());
    probe.unwrap_or_else(|| StepProbe::without_cgroup(&network, "no cgroup v2 directory")).with_v1(step.v1.clone())
}

impl RunningSteps {
    /// Nothing read yet.
    #[must_use]
    pub fn new() -> RunningSteps {
        RunningSteps::default()
    }

    /// Finds the running steps and reads each; a step gone since the last
    /// refresh is dropped, a new one read for the first time (no rates).
    pub fn refresh(&mut self) -> Vec<StepNow> {
        let steps = find();
        self.readers.retain(|run, _| steps.iter().any(|s| &s.run == run));
        let mut out = Vec::with_capacity(steps.len());
        for step in steps {
            let reader =
                self.readers.entry(step.run.clone()).or_insert_with(|| Reader { probe: probe_of(&step), last: None });
            let now = Timestamp::now();
            // The tick's monotonic time is unused by the step probe.
            let sample = reader.probe.sample(Tick { mono: std::time::Duration::ZERO, wall: now });
            let rates = reader.last.as_ref().and_then(|last| Rates::between(last, &sample));
            reader.last = Some(sample.clone());
            let elapsed_seconds = step.created.map(|c| now.duration_since(c).as_secs_f64().max(0.0));
            out.push(StepNow { step, sample, rates, elapsed_seconds });
        }
        out
    }
}
