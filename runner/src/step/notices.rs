//! What the user is told about the step's placement before it starts, and
//! why each unmeasured group is missing.

use std::path::{Path, PathBuf};

use stepmon_model::NotEnabled;
use stepmon_model::source::{EnclosingCgroup, Group, Rung, Sources};
use stepmon_sampler::cgroup::discover;

use super::Prepared;
use crate::cgroup::placement::RunCgroups;
use crate::host::shape::Shape;
use crate::notice::Notice;
use crate::options::CgroupMode;

/// A notice that needs a slow look at the host (the cgroup's shape, the
/// container): made from the placement when the notices are asked for
/// ([`Prepared::notices`]), not on every run (`-q` asks for none).
#[derive(Debug, Clone, Copy)]
pub(super) enum Deferred {
    /// [`shape_notice`], if it applies.
    NoControllers,
    /// The step has no cgroup: [`Notice::InContainer`] when the container
    /// is why, else [`Notice::NoCgroup`].
    NoCgroup,
}

impl Deferred {
    /// The notice for `prepared`, if one applies.
    pub(super) fn resolve(self, prepared: &Prepared) -> Option<Notice> {
        let host = &prepared.host;
        let location = prepared.location.as_ref();
        match self {
            Deferred::NoControllers => shape_notice(
                prepared.cgroups.as_ref()?.get(),
                location?,
                || host.shape(),
                host.euid,
                prepared.options.cgroup_parent.is_some(),
            ),
            Deferred::NoCgroup => {
                let reason = prepared.no_cgroup.clone()?;
                let enclosing = prepared.enclosing.as_ref();
                let container = (prepared.options.cgroup != CgroupMode::Never)
                    .then(|| host.container().cloned())
                    .flatten()
                    // The container is why: it allows no cgroup (not a missing privilege).
                    .filter(|c| c.read_only_cgroupfs || location.is_none());
                Some(match container {
                    Some(container) => {
                        Notice::InContainer { container, enclosing: enclosing.iter().flat_map(|e| e.dirs()).collect() }
                    }
                    None => Notice::NoCgroup {
                        reason,
                        enclosing: enclosing.map(|e| e.dir.clone()),
                        enclosing_is_root: enclosing.is_some_and(|e| e.root),
                    },
                })
            }
        }
    }
}

/// The notice for a step cgroup that got no controller because this
/// process's cgroup holds other processes (the no-internal-process rule):
/// the shape, what measures the step instead, what would do better.
pub(super) fn shape_notice<'a>(
    cgroups: &RunCgroups,
    location: &discover::Cgroup2,
    shape: impl FnOnce() -> Option<&'a Shape>,
    euid: u32,
    parent: bool,
) -> Option<Notice> {
    let lacking = cgroups.not_enabled.iter().any(|n| !n.reason.contains("cgroup v1"));
    if parent || !lacking || !cgroups.enabled.is_empty() {
        return None;
    }
    let shape = shape()?;
    let (io_rung, _) = shape.follows(euid, false);
    Some(Notice::NoControllers {
        shape: shape.words(),
        own: location.own_dir.clone(),
        leaf: cgroups.leaf.clone(),
        io_rung,
    })
}

/// The notice for a `--cgroup-parent` outside this process's cgroup: the
/// step escapes what that cgroup imposes.
pub(super) fn outside_notice(parent: Option<&Path>, own: &Path) -> Option<Notice> {
    let parent = parent?;
    let own: PathBuf = own.components().collect();
    let parent: PathBuf = parent.components().collect();
    (!parent.starts_with(&own)).then_some(Notice::ParentOutside { parent, own })
}

/// Why each unmeasured group is missing, in words.
pub(super) fn not_measured(
    sources: &Sources,
    v1_cpu: bool,
    not_enabled: &[NotEnabled],
    no_cgroup: Option<&str>,
    enclosing: Option<&EnclosingCgroup>,
) -> Vec<String> {
    // Read once, only when some controller is not accounted by a cgroup.
    let v1 = std::cell::OnceCell::new();
    let reason_of = |controller: &str| {
        if let Some(n) = not_enabled.iter().find(|n| n.controller == controller) {
            return n.reason.clone();
        }
        let v1 = v1.get_or_init(|| stepmon_sampler::cgroup::controllers_on_v1(Path::new("/proc")));
        if v1.iter().any(|c| c == controller) {
            return "bound to a cgroup v1 hierarchy on this host, where the step got no cgroup of its own".to_owned();
        }
        match (no_cgroup, enclosing) {
            (Some(why), Some(e)) => {
                format!("no cgroup of its own ({why}), and {} has no {controller} accounting", e.cgroup)
            }
            (Some(why), None) => format!("no cgroup of its own ({why})"),
            _ => format!("no {controller} files in the step's cgroup"),
        }
    };
    let mut by_reason: Vec<(String, Vec<&str>)> = Vec::new();
    let mut add = |what: &'static str, reason: String| match by_reason.iter_mut().find(|(r, _)| *r == reason) {
        Some((_, whats)) => whats.push(what),
        None => by_reason.push((reason, vec![what])),
    };
    // Throttling is the cpu controller's in the step's own cgroup, whatever
    // measured the CPU time.
    let cpu_on_v1 = not_enabled.iter().find(|n| n.controller == "cpu").is_some_and(|n| n.reason.contains("cgroup v1"));
    if v1_cpu {
        // Read from the step's cgroup v1 cpu hierarchy.
    } else if cpu_on_v1 {
        add(
            "cpu throttling (cpu controller)",
            "the cpu controller is bound to cgroup v1, where a cgroup counts only its own quota's throttling: \
             the step has no CPU limit of its own (--cpus)"
                .to_owned(),
        );
    } else if let Some(n) = not_enabled.iter().find(|n| n.controller == "cpu") {
        add("cpu throttling (cpu controller)", n.reason.clone());
    } else if sources.rung(Group::Cpu) != Some(Rung::CgroupV2) {
        let why = no_cgroup
            .map_or_else(|| "no cpu.stat for the step".to_owned(), |why| format!("no cgroup of its own ({why})"));
        add("cpu throttling (cpu controller)", why);
    }
    for (group, controller) in [(Group::Memory, "memory"), (Group::Io, "io"), (Group::Pids, "pids")] {
        if sources.get(group).is_none() {
            add(group.as_str(), reason_of(controller));
        }
    }
    let mut lines: Vec<String> =
        by_reason.into_iter().map(|(reason, whats)| format!("{}: {reason}", whats.join(", "))).collect();
    if sources.network.is_none() {
        lines.push(
            "network: the step shares the host's network namespace (use --net isolated or --net ns:PATH to count it)"
                .to_owned(),
        );
    }
    if !Path::new("/proc/pressure").exists() {
        lines.push("stall: pressure stall information is disabled on this kernel (boot with psi=1)".to_owned());
    } else if sources.pressure.is_none() {
        lines.push("stall: no cgroup's pressure files to read for the step (the machine's are in sysUsage)".to_owned());
    }
    lines
}
