//! The JSON a run writes: BuildKit's `resourceUsage` and `sysUsage`, plus a
//! `stepmon` object about the run itself.

use jiff::Timestamp;
use serde::Serialize;
use stepmon_sampler::model::{Samples, UsageSummary};
use stepmon_sysusage::model::SysSample;

use crate::placement::NotEnabled;

/// What stepmon itself cost while monitoring.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Collector {
    /// stepmon's own CPU time (user + system), s.
    pub cpu_seconds: Option<f64>,
    /// stepmon's peak resident memory, bytes.
    pub max_rss_bytes: Option<u64>,
    /// Step samples kept in the output.
    pub samples: usize,
    /// Machine samples kept in the output.
    pub sys_samples: usize,
}

/// The host as stepmon found it.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Host {
    /// `uname -r`.
    pub kernel: String,
    /// The cgroup2 mount point.
    pub cgroup2_mount: String,
    /// `unified` (pure cgroup v2) or `hybrid`.
    pub cgroup_layout: &'static str,
    /// Whether PSI is available (`/proc/pressure` exists).
    pub psi: bool,
}

/// stepmon's part of the output.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    /// The command as given.
    pub command: Vec<String>,
    /// Exit code of the command, if it exited.
    pub exit_code: Option<i32>,
    /// Signal that killed the command, if any.
    pub signal: Option<i32>,
    /// When the step started.
    pub start: Option<Timestamp>,
    /// When it ended.
    pub end: Option<Timestamp>,
    /// The step's cgroup while it ran.
    pub cgroup: String,
    /// Controllers enabled for the step.
    pub controllers: Vec<&'static str>,
    /// Controllers that could not be enabled, and why.
    pub controllers_not_enabled: Vec<NotEnabled>,
    /// The host.
    pub host: Host,
    /// stepmon's own overhead.
    pub collector: Collector,
    /// The numbers of the summary.
    pub summary: UsageSummary,
    /// What was not measured, in words (also in each sample's `missing`).
    pub not_measured: Vec<String>,
}

/// The whole output.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// BuildKit's `resourceUsage`.
    pub resource_usage: Samples,
    /// BuildKit's `sysUsage`.
    pub sys_usage: Vec<SysSample>,
    /// About the run.
    pub stepmon: RunInfo,
}

/// This process's CPU time (s, all its threads) and peak RSS (bytes, `VmHWM`).
pub fn own_usage() -> (Option<f64>, Option<u64>) {
    // CLOCK_PROCESS_CPUTIME_ID is exact; /proc/self/stat counts 10 ms ticks,
    // which reads 0 for stepmon's ~12 ms per 10 s step.
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    #[allow(clippy::cast_precision_loss)]
    let cpu = Some(now.tv_sec as f64 + now.tv_nsec as f64 / 1e9);
    let rss = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    });
    (cpu, rss)
}
