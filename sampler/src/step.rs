//! A step as a [`Probe`]: its cgroup plus, optionally, its own network namespace.

use std::io;
use std::path::Path;

use stepmon_netns_stats::{NetnsCounters, NetworkSampler, TotalsOptions};

use crate::cgroup::{CgroupProbe, CgroupV1Dirs, CgroupV1Probe};
use crate::network::NetworkSource;
use crate::probe::{Probe, Tick};
use stepmon_model::missing::{Missing, MissingKind};
use stepmon_model::sample::StepSample;

/// Samples one step: its cgroup directory (if it has one) and its network.
#[derive(Debug)]
pub struct StepProbe {
    cgroup: Result<CgroupProbe, Missing>,
    /// The step's cgroup v1 hierarchies, filling what its cgroup v2 lacks.
    v1: Option<CgroupV1Probe>,
    net: Result<(NetnsCounters, NetworkSampler), Missing>,
}

impl StepProbe {
    /// Opens the step's cgroup directory and network namespace.
    pub fn open(cgroup_dir: impl AsRef<Path>, network: &NetworkSource) -> io::Result<StepProbe> {
        Ok(StepProbe { cgroup: Ok(CgroupProbe::open(cgroup_dir)?), v1: None, net: open_network(network) })
    }

    /// A step without a cgroup of its own: only its network is sampled;
    /// every sample's `missing` names the cgroup fields with `reason`.
    #[must_use]
    pub fn without_cgroup(network: &NetworkSource, reason: &str) -> StepProbe {
        let missing = Missing::new("cpuStat", "", MissingKind::NotMeasured, format!("no cgroup of its own: {reason}"));
        StepProbe { cgroup: Err(missing), v1: None, net: open_network(network) }
    }

    /// Also reads the step's cgroups in the v1 hierarchies `dirs`, for what
    /// its cgroup v2 (if any) does not account.
    #[must_use]
    pub fn with_v1(mut self, dirs: CgroupV1Dirs) -> StepProbe {
        if !dirs.is_empty() {
            self.v1 = Some(CgroupV1Probe::open(dirs));
        }
        self
    }

    /// The step's cgroup probe, if it has a cgroup.
    #[must_use]
    pub fn cgroup(&self) -> Option<&CgroupProbe> {
        self.cgroup.as_ref().ok()
    }
}

fn open_network(network: &NetworkSource) -> Result<(NetnsCounters, NetworkSampler), Missing> {
    match network {
        NetworkSource::SharedNamespace => Err(Missing::new(
            "netStat",
            "",
            MissingKind::NotMeasured,
            "the step shares its network namespace, so interface counters would include others' traffic (use an isolated namespace to count it)",
        )),
        NetworkSource::Namespace { path, include_loopback } => match NetnsCounters::open(path) {
            Ok(counters) => {
                let options = TotalsOptions { include_loopback: *include_loopback };
                Ok((counters, NetworkSampler::new(options)))
            }
            Err(e) => Err(Missing::new("netStat", "net/dev", MissingKind::Io, e.to_string())),
        },
    }
}

impl Probe for StepProbe {
    type Sample = StepSample;

    fn sample(&mut self, tick: Tick) -> StepSample {
        let mut sample = match &mut self.cgroup {
            Ok(cgroup) => cgroup.read(tick.wall),
            Err(missing) => {
                let mut sample = StepSample::empty(tick.wall);
                for field in ["cpuStat", "memoryStat", "ioStat", "pidsStat"] {
                    let mut entry = missing.clone();
                    entry.field = field.into();
                    sample.stepmon.missing.push(entry);
                }
                sample
            }
        };
        if let Some(v1) = &mut self.v1 {
            v1.fill(&mut sample);
        }
        match &mut self.net {
            Err(missing) => sample.stepmon.missing.push(missing.clone()),
            Ok((counters, sampler)) => match counters.read() {
                Ok(snapshot) => {
                    let outcome = sampler.observe(&snapshot);
                    sample.net_stat = Some(outcome.sample);
                    if outcome.counters_went_backwards || outcome.interfaces_vanished {
                        sample.stepmon.missing.push(Missing::new(
                            "netStat",
                            "net/dev",
                            MissingKind::Absent,
                            "an interface was recreated or removed during the step; traffic between two samples may be missing",
                        ));
                    }
                }
                Err(e) => {
                    sample.stepmon.missing.push(Missing::new("netStat", "net/dev", MissingKind::Io, e.to_string()))
                }
            },
        }
        sample
    }
}
