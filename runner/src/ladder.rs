//! The measurement ladder: for each field group, the best source that
//! actually measured it in this run, judged from what the samples hold (a
//! controller that was enabled but whose files were absent does not count).
//!
//! | group | best first |
//! |---|---|
//! | cpu | step cgroup (or the step's systemd scope) › process tree |
//! | memory | step cgroup › enclosing cgroup (peak exact, a lower bound, or on cgroup v1 an upper bound) › process tree (sampled, a lower bound) |
//! | io | step cgroup › process tree (task IO accounting) |
//! | pids | step cgroup › enclosing cgroup |
//! | pressure | step cgroup › enclosing cgroup › the machine (`/proc/pressure`) |
//! | network | the step's own network namespace |
//!
//! The process tree beats the enclosing cgroup for CPU and IO because it
//! counts the step alone; the enclosing cgroup is the only source of memory,
//! task counts and stall time without a cgroup of the step's own.

use std::path::Path;

use stepmon_model::sample::StepSample;
use stepmon_model::source::{Bound, EnclosingCgroup, Group, ProcessTree, Rung, Source, Sources, TreeMemoryFrom};

/// What one run measured, for [`choose`].
#[derive(Debug)]
pub(crate) struct Evidence<'a> {
    /// The step's own samples (its cgroup v2 and v1 directories merged).
    pub step: Option<&'a [StepSample]>,
    /// Its cgroup v2 directory.
    pub leaf: Option<&'a Path>,
    /// Controllers enabled for it in cgroup v2.
    pub v2_controllers: &'a [String],
    /// Its cgroup v1 directories: (v1 controller, directory).
    pub v1: &'a [(String, String)],
    /// The enclosing cgroup, if sampled.
    pub enclosing: Option<&'a EnclosingCgroup>,
    /// The process tree.
    pub tree: &'a ProcessTree,
    /// Whether the step had a network namespace of its own.
    pub own_network: bool,
    /// The transient systemd scope whose cgroup `leaf` is, if it is one.
    pub scope: Option<&'a str>,
    /// Whether the machine's pressure (`/proc/pressure`) was sampled.
    pub machine_pressure: bool,
}

fn has(samples: &[StepSample], group: Group) -> bool {
    samples.iter().any(|s| match group {
        Group::Cpu => s.cpu_stat.is_some_and(|c| c.usage_nanos.is_some()),
        Group::Memory => {
            s.memory_stat.is_some_and(|m| m.anon.is_some() || m.peak.is_some()) || s.stepmon.memory_current.is_some()
        }
        Group::Io => s.io_stat.is_some_and(|i| i.read_bytes.is_some() || i.write_bytes.is_some()),
        Group::Pids => s.pids_stat.current.is_some(),
        Group::Pressure => s.cpu_stat.is_some_and(|c| c.pressure.is_some()),
        Group::Network => s.net_stat.is_some(),
    })
}

/// The source of each group in a run with `evidence`.
pub(crate) fn choose(evidence: &Evidence<'_>) -> Sources {
    let mut sources = Sources::default();
    let processes = match evidence.tree.processes_reaped {
        1 => "1 process".to_owned(),
        n => format!("{n} processes"),
    };
    for group in Group::ALL {
        let own = evidence.step.filter(|samples| has(samples, group)).and_then(|_| own_source(evidence, group));
        // The root cgroup's memory and task counts are the whole machine's
        // (in sysUsage already), not a bound on the step's.
        let around = evidence.enclosing.filter(|e| {
            has(&e.samples, group)
                && !(e.root && e.cgroup_v1.is_empty() && matches!(group, Group::Memory | Group::Pids))
        });
        let source = match (group, own, around) {
            (Group::Network, _, _) => {
                evidence.own_network.then(|| Source::exact(Rung::NetworkNamespace, "the step's own network namespace"))
            }
            (_, Some(source), _) => Some(source),
            (Group::Cpu, None, _) => Some(Source::exact(
                Rung::ProcessTree,
                format!("the step's process tree as stepmon reaped it ({processes}; wait4 rusage)"),
            )),
            (Group::Io, None, _) => Some(Source::exact(
                Rung::ProcessTree,
                format!("storage reads and writes of the step's process tree ({processes}; task IO accounting)"),
            )),
            (Group::Memory, None, Some(e)) if e.memory_peak_at_start.is_some() => Some(v1_memory(e)),
            (Group::Memory, None, Some(e)) => {
                Some(bounded(e.memory_peak().map_or(Bound::LowerBound, |(_, b)| b), e, "memory.current every sample"))
            }
            (Group::Memory, None, None) => evidence.tree.memory.map(|m| {
                let from = match m.from {
                    TreeMemoryFrom::SmapsRollup => "Pss_Anon + Pss_Shmem (smaps_rollup: a shared page counted once)",
                    TreeMemoryFrom::Status => {
                        "RssAnon + RssShmem (status, before Linux 5.3: shared pages counted in every process)"
                    }
                };
                Source::lower_bound(
                    Rung::ProcessTree,
                    format!(
                        "the step's live processes, sampled: the largest sum of {from} of {} samples every {} ms",
                        m.samples, m.interval_ms
                    ),
                )
            }),
            (Group::Pids, None, Some(e)) => {
                Some(bounded(e.pids_peak().map_or(Bound::LowerBound, |(_, b)| b), e, "pids.current every sample"))
            }
            // The root cgroup's pressure is the machine's (/proc/pressure).
            (Group::Pressure, None, Some(e)) if e.root => Some(Source::exact(Rung::Machine, e.covers())),
            (Group::Pressure, None, Some(e)) => Some(Source::exact(Rung::EnclosingCgroup, e.covers())),
            // No cgroup's pressure files: the machine's, every task's stall.
            (Group::Pressure, None, None) if evidence.machine_pressure => Some(Source::exact(
                Rung::Machine,
                "the whole machine (/proc/pressure): every task's stall, the step's among them",
            )),
            _ => None,
        };
        sources.set(group, source);
    }
    sources
}

/// Which of the step's own cgroups a group's numbers came from: v2 where
/// its controller is enabled there (CPU time and PSI are in every v2
/// cgroup), else v1.
fn own_source(evidence: &Evidence<'_>, group: Group) -> Option<Source> {
    let (v2, v1): (Option<&str>, &[&str]) = match group {
        Group::Cpu => (None, &["cpuacct"]),
        Group::Memory => (Some("memory"), &["memory"]),
        Group::Io => (Some("io"), &["blkio"]),
        Group::Pids => (Some("pids"), &["pids"]),
        Group::Pressure => (None, &[]),
        Group::Network => return None,
    };
    let in_v2 = evidence.leaf.filter(|_| v2.is_none_or(|c| evidence.v2_controllers.iter().any(|e| e == c)));
    if let Some(leaf) = in_v2 {
        return Some(match evidence.scope {
            Some(unit) => Source::exact(
                Rung::SystemdScope,
                format!("the step's own transient systemd scope {unit} (cgroup {})", leaf.display()),
            ),
            None => Source::exact(Rung::CgroupV2, format!("the step's own cgroup {}", leaf.display())),
        });
    }
    let dir = evidence.v1.iter().find(|(c, _)| v1.contains(&c.as_str()))?;
    Some(Source::exact(Rung::CgroupV1, format!("the step's own cgroup v1 {}", dir.1)))
}

/// A cgroup v1 memory peak (`memory.max_usage_in_bytes`, never reset): an
/// upper bound, with the usage at the start and the largest sampled usage
/// (the lower bound) in its words.
fn v1_memory(e: &EnclosingCgroup) -> Source {
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / f64::from(1u32 << 20));
    // cgroup v1's files, or v2's where memory.peak could not be reset.
    let (peak_file, usage_file) = if e.memory_v1 {
        ("memory.max_usage_in_bytes", "memory.usage_in_bytes")
    } else {
        ("memory.peak", "memory.current")
    };
    let mut covers = format!(
        "{}; {peak_file}, never reset: it includes what the cgroup held before the step and stepmon",
        e.covers()
    );
    if let Some(at_start) = e.memory_usage_at_start {
        covers.push_str(&format!("; usage at the start {}", mib(at_start)));
    }
    if let Some(low) = e.memory_sampled_max() {
        covers.push_str(&format!("; at least {} (the largest sampled {usage_file})", mib(low)));
    }
    let Some((peak, bound)) = e.memory_peak() else {
        return Source::lower_bound(Rung::EnclosingCgroup, covers);
    };
    match (e.memory_peak_at_start, e.memory_usage_at_start) {
        (Some(before), _) if before >= peak => {
            covers.push_str("; the peak did not rise during the step: it is from before, the step's is lower");
        }
        (Some(before), Some(at_start)) if before == at_start && e.other_processes_at_start == Some(0) => {
            covers.push_str(&format!(
                "; the peak at the start equalled the usage then and no other process ran: the step and stepmon \
                 peaked at most {} above the start",
                mib(peak.saturating_sub(at_start))
            ));
        }
        _ => {}
    }
    Source { rung: Rung::EnclosingCgroup, bound, covers }
}

fn bounded(bound: Bound, e: &EnclosingCgroup, sampled: &str) -> Source {
    match bound {
        Bound::Exact => Source::exact(Rung::EnclosingCgroup, e.covers()),
        _ => Source::lower_bound(Rung::EnclosingCgroup, format!("{}; the largest of {sampled}", e.covers())),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use jiff::Timestamp;
    use stepmon_model::sample::StepSample;
    use stepmon_model::source::{Group, ProcessTree, Rung};

    use super::{Evidence, choose};

    #[test]
    fn a_step_in_its_systemd_scope_is_labelled_so() {
        let mut sample = StepSample::empty(Timestamp::UNIX_EPOCH);
        sample.stepmon.memory_current = Some(64 << 20);
        sample.pids_stat.current = Some(3);
        let samples = [sample];
        let controllers = ["cpu", "memory", "io", "pids"].map(str::to_owned);
        let tree = ProcessTree::default();
        let leaf = Path::new("/sys/fs/cgroup/ci.slice/stepmon-run.1.2.scope");
        let evidence = |scope| Evidence {
            step: Some(&samples),
            leaf: Some(leaf),
            v2_controllers: &controllers,
            v1: &[],
            enclosing: None,
            tree: &tree,
            own_network: false,
            scope,
            machine_pressure: false,
        };
        let sources = choose(&evidence(Some("stepmon-run.1.2.scope")));
        for group in [Group::Memory, Group::Pids] {
            assert_eq!(sources.rung(group), Some(Rung::SystemdScope), "{group:?}");
        }
        assert!(sources.get(Group::Memory).unwrap().covers.contains("stepmon-run.1.2.scope"));
        // The same cgroup made by stepmon itself is the plain v2 rung.
        assert_eq!(choose(&evidence(None)).rung(Group::Memory), Some(Rung::CgroupV2));
    }
}
