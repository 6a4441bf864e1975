//! Why a file the step probe reads is absent from a cgroup directory: worked
//! out once, at open, from what the directory itself shows (its
//! `cgroup.controllers`, which files it has, whether it is the hierarchy's
//! root) and from `/proc/cgroups`.
//!
//! A directory the kernel made has every file its kernel creates there, so
//! an absent file says something about the kernel (too old, PSI off, no
//! swap accounting, ...). A directory that shows it is not as the kernel
//! made it (a copy, a test's fixture, files removed) says nothing of the
//! kind: there the reason is only that the file is not in it.

use core::fmt;

use super::files::{CGROUP_V2, CgroupFile, Controller, Requirement, Version};
use stepmon_model::missing::{Missing, MissingKind};

/// Where the probe stands: which controllers the cgroup has, which are
/// bound to cgroup v1 on this host, whether it is the root, which files
/// exist.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    /// The cgroup's `cgroup.controllers` (enabled for it by its parent).
    enabled: Vec<String>,
    /// Controllers bound to a v1 hierarchy (`/proc/cgroups` hierarchy ≠ 0).
    on_v1: Vec<String>,
    /// The directory is the root of the cgroup v2 hierarchy.
    is_root: bool,
    /// Per file of [`CgroupFile::ALL`] (by [`CgroupFile::index`]): whether
    /// it exists in the directory.
    exists: [bool; CgroupFile::ALL.len()],
    /// What shows that the directory is not as the kernel made it, if
    /// anything does: the first such file, in read order.
    not_kernel_made: Option<String>,
}

/// What shows that the kernel is at least some release.
#[derive(Debug, Clone, Copy)]
enum Evidence {
    /// `cgroup.controllers`, which the probe needs: cgroup v2's first release.
    Controllers,
    /// A controller `cgroup.controllers` lists: its first cgroup v2 release.
    Controller(Controller),
    /// A file that exists: its own first release.
    File(&'static str),
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Evidence::Controllers => write!(f, "cgroup.controllers does"),
            Evidence::Controller(controller) => write!(f, "cgroup.controllers lists {}", controller.name()),
            Evidence::File(name) => write!(f, "{name} does"),
        }
    }
}

/// Why the kernel that made a directory with this one's files would have
/// made a file too: "`<file>` does not exist although `<proof>`: the kernel
/// creates `<file>` in `<scope>`".
struct Required {
    proof: String,
    scope: String,
}

impl Context {
    /// The context of a directory; `exists` is per file of
    /// [`CgroupFile::ALL`] (by [`CgroupFile::index`]).
    pub(crate) fn new(
        enabled: Vec<String>,
        on_v1: Vec<String>,
        is_root: bool,
        exists: [bool; CgroupFile::ALL.len()],
    ) -> Context {
        let mut context = Context { enabled, on_v1, is_root, exists, not_kernel_made: None };
        context.not_kernel_made = context.find_not_kernel_made();
        context
    }

    fn has(&self, controller: Controller) -> bool {
        self.enabled.iter().any(|c| c == controller.name())
    }

    fn exists(&self, file: CgroupFile) -> bool {
        self.exists.get(file.index()).copied().unwrap_or(false)
    }

    /// The first file of `controller` that exists, in read order.
    fn first_of(&self, controller: Controller) -> Option<&'static str> {
        CgroupFile::ALL
            .into_iter()
            .map(|file| (file, file.info()))
            .find(|(file, info)| info.controller == Some(controller) && self.exists(*file))
            .map(|(_, info)| info.name)
    }

    /// What shows the kernel is at least release `need`, naming the
    /// oldest release that does: every file exists only from its first
    /// release on (at the root, from the root's), every controller in
    /// `cgroup.controllers` from its first cgroup v2 release.
    fn evidence_for(&self, need: Version) -> Option<(Version, Evidence)> {
        let controllers = [Controller::Cpu, Controller::Memory, Controller::Io, Controller::Pids]
            .into_iter()
            .filter(|c| self.has(*c))
            .map(|c| (c.since(), Evidence::Controller(c)));
        let files = CgroupFile::ALL
            .into_iter()
            .filter(|file| self.exists(*file))
            .map(|file| (file.info().requirement.since().at(self.is_root), Evidence::File(file.info().name)));
        core::iter::once((CGROUP_V2, Evidence::Controllers))
            .chain(controllers)
            .chain(files)
            .filter(|(release, _)| *release >= need)
            .min_by_key(|(release, _)| *release)
    }

    /// Whether the kernel that made a directory with the files this one
    /// has would have made `file` too, and what shows it.
    fn required(&self, file: CgroupFile) -> Option<Required> {
        let info = file.info();
        if self.is_root && info.not_on_root {
            return None;
        }
        if let Some(controller) = info.controller
            && !self.has(controller)
        {
            return None;
        }
        let need = info.requirement.since().at(self.is_root);
        // Created with its controller in every kernel whose cgroup v2 has
        // the controller: that `cgroup.controllers` lists it is enough.
        if let Requirement::WithController(_) = info.requirement
            && let Some(controller) = info.controller
            && need == controller.since()
        {
            let proof = match self.first_of(controller) {
                Some(present) => format!("{present} does"),
                None => format!("cgroup.controllers lists {}", controller.name()),
            };
            let scope = format!("every non-root cgroup with the {} controller", controller.name());
            return Some(Required { proof, scope });
        }
        let (have, evidence) = self.evidence_for(need)?;
        let mut proof = format!("{evidence}, which needs Linux {have}");
        let mut gates_on = Vec::new();
        for &gate in info.gates {
            let shown_by = CgroupFile::ALL
                .into_iter()
                .filter(|other| *other != file && self.exists(*other))
                .map(|other| other.info())
                .find(|other| other.gates.contains(&gate))?;
            if matches!(evidence, Evidence::File(name) if name == shown_by.name) {
                proof.push_str(&format!(" and shows {} is on", gate.name()));
            } else {
                proof.push_str(&format!(", and {} shows {} is on", shown_by.name, gate.name()));
            }
            gates_on.push(gate.name());
        }
        let mut scope = if self.is_root { "the root cgroup".to_owned() } else { "every non-root cgroup".to_owned() };
        if let Some(controller) = info.controller {
            scope.push_str(&format!(" with the {} controller", controller.name()));
        }
        scope.push_str(&format!(" since Linux {need}"));
        if !gates_on.is_empty() {
            scope.push_str(&format!(" while {} is on", gates_on.join(" and ")));
        }
        Some(Required { proof, scope })
    }

    fn find_not_kernel_made(&self) -> Option<String> {
        for file in CgroupFile::ALL {
            let info = file.info();
            if self.exists(file) {
                if let Some(controller) = info.controller
                    && !self.has(controller)
                {
                    return Some(format!(
                        "{} exists although cgroup.controllers does not list the {} controller",
                        info.name,
                        controller.name()
                    ));
                }
            } else if let Some(required) = self.required(file) {
                return Some(format!("{} does not exist although {}", info.name, required.proof));
            }
        }
        None
    }

    /// The entry for a file that does not exist: the field to report, the
    /// file that tells, why.
    pub(crate) fn absent(&self, file: CgroupFile) -> Missing {
        let (field, source, kind, reason) = self.why_absent(file);
        Missing::new(field, source, kind, reason)
    }

    fn why_absent(&self, file: CgroupFile) -> (&'static str, &'static str, MissingKind, String) {
        let info = file.info();
        // A controller's files exist only where `cgroup.controllers` lists it
        // (https://docs.kernel.org/admin-guide/cgroup-v2.html#enabling-and-disabling).
        // A file of it that exists anyway shows a directory not as the
        // kernel made it: below, each file then gets its own entry.
        if let Some(controller) = info.controller
            && !self.has(controller)
            && self.first_of(controller).is_none()
        {
            let name = controller.name();
            // Without the cpu controller cpu.stat still exists (core keys);
            // only the cpu-controller fields are absent, so name those.
            let object = if controller == Controller::Cpu { info.field } else { controller.object() };
            return if self.on_v1.iter().any(|c| c == name) {
                (
                    object,
                    "cgroup.controllers",
                    MissingKind::ControllerOnCgroupV1,
                    format!(
                        "the {name} controller is bound to a cgroup v1 hierarchy on this host (hybrid layout), so cgroup v2 cannot account it"
                    ),
                )
            } else {
                (
                    object,
                    "cgroup.controllers",
                    MissingKind::ControllerNotEnabled,
                    format!(
                        "the {name} controller is not enabled for this cgroup (add +{name} to the parent's cgroup.subtree_control)"
                    ),
                )
            };
        }
        // The files the kernel doc marks "non-root" (same page).
        if self.is_root && info.not_on_root {
            return (
                info.field,
                info.name,
                MissingKind::NotOnRootCgroup,
                format!("{} does not exist on the root cgroup", info.name),
            );
        }
        if let Some(Required { proof, scope }) = self.required(file) {
            let name = info.name;
            return (
                info.field,
                name,
                MissingKind::NotFound,
                format!(
                    "{name} does not exist although {proof}: the kernel creates {name} in {scope}, so this directory is not as the kernel made it (a copy, or files removed)"
                ),
            );
        }
        if let Some(shown) = &self.not_kernel_made {
            return (
                info.field,
                info.name,
                MissingKind::NotFound,
                format!(
                    "{} is not in this directory, which is not as the kernel made it ({shown}): its absence says nothing about the kernel",
                    info.name
                ),
            );
        }
        match info.requirement {
            Requirement::Psi => (
                info.field,
                info.name,
                MissingKind::PsiDisabled,
                format!(
                    "{} is absent: pressure stall information is disabled (CONFIG_PSI, boot with psi=1, or cgroup.pressure is 0)",
                    info.name
                ),
            ),
            Requirement::Kernel(version) => (
                info.field,
                info.name,
                MissingKind::KernelTooOld,
                format!("{} needs Linux {version} or newer", info.name),
            ),
            Requirement::WithController(since) => (
                info.field,
                info.name,
                MissingKind::KernelTooOld,
                format!("{} needs Linux {since} or newer", info.name),
            ),
            Requirement::Feature(feature, _) => {
                (info.field, info.name, MissingKind::KernelFeatureMissing, format!("{} needs {feature}", info.name))
            }
            Requirement::Core(since) => (
                info.field,
                info.name,
                MissingKind::KernelTooOld,
                format!("{} is absent (a core cgroup file since Linux {since})", info.name),
            ),
        }
    }

    /// The entries for a `cpu.stat` without the bandwidth keys (`nr_periods`,
    /// `nr_throttled`, `throttled_usec`): the cpu controller is bound to v1
    /// or not enabled, or the kernel lacks `CONFIG_CFS_BANDWIDTH`.
    pub(crate) fn cpu_bandwidth_absent(&self) -> [Missing; 3] {
        let cpu_enabled = self.has(Controller::Cpu);
        let (kind, reason) = if self.on_v1.iter().any(|c| c == "cpu") && !cpu_enabled {
            (
                MissingKind::ControllerOnCgroupV1,
                "the cpu controller is bound to a cgroup v1 hierarchy on this host (hybrid layout); cpu.stat has only the core usage keys",
            )
        } else if !cpu_enabled {
            (
                MissingKind::ControllerNotEnabled,
                "the cpu controller is not enabled for this cgroup; cpu.stat has only the core usage keys",
            )
        } else {
            (MissingKind::KernelFeatureMissing, "cpu.stat has no bandwidth keys (CONFIG_CFS_BANDWIDTH)")
        };
        ["cpuStat.nrPeriods", "cpuStat.nrThrottled", "cpuStat.throttledNanos"]
            .map(|field| Missing::new(field, "cpu.stat", kind, reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(enabled: &[&str], on_v1: &[&str], is_root: bool, present: &[CgroupFile]) -> Context {
        let mut exists = [false; CgroupFile::ALL.len()];
        for file in present {
            exists[file.index()] = true;
        }
        let owned = |list: &[&str]| list.iter().map(|c| (*c).to_owned()).collect();
        Context::new(owned(enabled), owned(on_v1), is_root, exists)
    }

    /// The probe adds an entry made at open without searching the list for
    /// its field unless a read failed (`Reader::note_fixed`): that needs the
    /// cpu bandwidth entries to name fields no file's entry names.
    #[test]
    fn no_file_names_a_cpu_bandwidth_field() {
        for bandwidth in context(&[], &["cpu"], false, &[]).cpu_bandwidth_absent() {
            for file in CgroupFile::ALL {
                let info = file.info();
                let object = info.controller.map(Controller::object);
                assert!(info.field != bandwidth.field && object != Some(&*bandwidth.field), "{file:?}");
                for context in [
                    context(&[], &[], false, &[]),
                    context(&[], &["cpu"], true, &[]),
                    context(&["cpu", "memory", "io", "pids"], &[], false, &[CgroupFile::CpuStat]),
                    context(&[], &[], false, &[CgroupFile::MemoryPeak]),
                ] {
                    assert_ne!(context.absent(file).field, bandwidth.field, "{file:?}");
                }
            }
        }
    }

    /// Every file absent from a non-root directory that is as the kernel
    /// made it keeps a reason about the kernel; once one file shows it is
    /// not, the others only say they are not in it.
    #[test]
    fn a_directory_not_as_the_kernel_made_it_says_nothing_about_the_kernel() {
        use CgroupFile::{CgroupEvents, CpuPressure, CpuStat, IoPressure, MemoryPeak, MemoryPressure};
        // A hybrid host's step cgroup: nothing shows it is not the kernel's.
        let kernel_made = context(&[], &[], false, &[CgroupEvents, CpuStat, CpuPressure, MemoryPressure, IoPressure]);
        assert_eq!(kernel_made.absent(CgroupFile::IrqPressure).kind, MissingKind::KernelFeatureMissing);
        assert_eq!(kernel_made.absent(CgroupFile::MemoryStat).kind, MissingKind::ControllerNotEnabled);

        // The same without cgroup.events, which every non-root cgroup has.
        let copy = context(&[], &[], false, &[CpuStat, CpuPressure, MemoryPressure, IoPressure]);
        let events = copy.absent(CgroupEvents);
        assert_eq!(events.kind, MissingKind::NotFound);
        assert!(events.reason.contains("although cgroup.controllers does, which needs Linux 4.5"), "{events:?}");
        let irq = copy.absent(CgroupFile::IrqPressure);
        assert_eq!(irq.kind, MissingKind::NotFound);
        assert!(irq.reason.contains("(cgroup.events does not exist although cgroup.controllers does"), "{irq:?}");
        // What cgroup.controllers says still holds.
        assert_eq!(copy.absent(CgroupFile::MemoryStat).kind, MissingKind::ControllerNotEnabled);

        // A memory file without the memory controller: each memory file its own entry.
        let stray = context(&[], &[], false, &[CgroupEvents, CpuStat, MemoryPeak]);
        let stat = stray.absent(CgroupFile::MemoryStat);
        assert_eq!((stat.field.as_ref(), stat.kind), ("memoryStat", MissingKind::NotFound));
        assert!(stat.reason.contains("memory.peak exists although cgroup.controllers does not list the memory"));

        // PSI shown on by another pressure file, a release by a newer file.
        let psi =
            context(&["memory"], &[], false, &[CgroupEvents, CpuStat, MemoryPressure, CgroupFile::MemorySwapPeak]);
        let cpu = psi.absent(CpuPressure);
        assert_eq!(cpu.kind, MissingKind::NotFound);
        assert!(
            cpu.reason.contains(
                "although memory.pressure does, which needs Linux 4.20 and shows pressure stall information is on"
            ),
            "{cpu:?}"
        );
        assert_eq!(psi.absent(CgroupFile::MemoryPeak).kind, MissingKind::NotFound);
        // Every file the memory controller comes with, nothing newer: a
        // kernel older than 4.20 without PSI, as far as the directory shows.
        let old = context(
            &["memory"],
            &[],
            false,
            &[
                CgroupEvents,
                CpuStat,
                CgroupFile::MemoryStat,
                CgroupFile::MemoryEvents,
                CgroupFile::MemoryCurrent,
                CgroupFile::MemoryMax,
                CgroupFile::MemoryHigh,
            ],
        );
        assert_eq!(old.absent(MemoryPeak).kind, MissingKind::KernelTooOld);
        assert_eq!(old.absent(CpuPressure).kind, MissingKind::PsiDisabled);
        assert_eq!(old.absent(CgroupFile::MemorySwapCurrent).kind, MissingKind::KernelFeatureMissing);
        // Nothing but irq.pressure itself shows IRQ time accounting on.
        let irq = context(&[], &[], false, &[CgroupEvents, CpuStat, CpuPressure, MemoryPressure, IoPressure]);
        assert_eq!(irq.absent(CgroupFile::IrqPressure).kind, MissingKind::KernelFeatureMissing);
    }

    #[test]
    fn the_root_lacks_the_non_root_files_and_nothing_else() {
        let root = context(&["memory"], &[], true, &[CgroupFile::CpuStat, CgroupFile::MemoryStat]);
        for file in [CgroupFile::CgroupEvents, CgroupFile::MemoryCurrent, CgroupFile::MemoryPeak] {
            assert_eq!(root.absent(file).kind, MissingKind::NotOnRootCgroup, "{file:?}");
        }
        // memory.stat exists at the root since 6.0: absent there is an older kernel.
        let old_root = context(&["memory"], &[], true, &[CgroupFile::CpuStat]);
        let stat = old_root.absent(CgroupFile::MemoryStat);
        assert_eq!(
            (stat.kind, stat.reason.as_ref()),
            (MissingKind::KernelTooOld, "memory.stat needs Linux 4.5 (root: 6.0) or newer")
        );
        // Not the root: the same files are required there.
        let child = context(&["memory"], &[], false, &[CgroupFile::CpuStat, CgroupFile::MemoryStat]);
        assert_eq!(child.absent(CgroupFile::MemoryCurrent).kind, MissingKind::NotFound);
    }
}
