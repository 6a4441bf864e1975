//! The whole machine as a [`Probe`]: `/proc` readings as BuildKit `SysSample`s.

use std::io;
use std::path::Path;

use stepmon_model::system::SysSample;
use stepmon_sysusage::probe::{SysProbe, SysReading};

use crate::probe::{Probe, Tick};

/// Samples `/proc/{stat,meminfo,loadavg,pressure/*}` through held fds
/// (`stepmon-sysusage`'s [`SysProbe`]) into [`SysSample`]s; keeps the
/// previous reading for the steal share.
#[derive(Debug)]
pub struct SystemProbe {
    probe: SysProbe,
    previous: Option<SysReading>,
}

impl SystemProbe {
    /// Opens the files below a procfs root (normally `/proc`).
    pub fn open(proc_root: impl AsRef<Path>) -> io::Result<SystemProbe> {
        Ok(SystemProbe { probe: SysProbe::open(proc_root)?, previous: None })
    }

    /// One raw reading (for per-step CPU deltas).
    pub fn reading(&mut self) -> SysReading {
        self.probe.read()
    }

    /// The reading of the last sample if it started at or after `since`,
    /// else a new one: the sample a subscriber just took (a baseline, a
    /// final sample) doubles as a step's start or end reading of
    /// `/proc/stat` without reading every file again.
    pub(crate) fn reading_since(&mut self, since: std::time::Instant) -> SysReading {
        match &self.previous {
            Some(previous) if previous.instant >= since => previous.clone(),
            _ => self.reading(),
        }
    }
}

impl Probe for SystemProbe {
    type Sample = SysSample;

    fn sample(&mut self, tick: Tick) -> SysSample {
        let mut reading = self.probe.read();
        reading.timestamp = tick.wall;
        let sample = stepmon_sysusage::model::sys_sample(&reading, self.previous.as_ref());
        self.previous = Some(reading);
        sample
    }
}
