//! What the user should know about a step's placement before it starts
//! ([`crate::Prepared::notices`]), as values: a caller can act on a kind of
//! notice, or word it its own way; `Display` gives stepmon's own words.

use std::fmt;
use std::path::PathBuf;

use stepmon_model::Rung;

/// One thing to tell the user before the step starts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// Removing the cgroups of earlier runs whose stepmon died failed
    /// (`under`: that cgroup v2 directory; `None`: the v1 hierarchies).
    CleanupFailed {
        /// Where the earlier runs' cgroups are.
        under: Option<PathBuf>,
        /// The error.
        error: String,
    },
    /// The step's cgroup got no controller: this process's cgroup holds
    /// other processes (the no-internal-process rule,
    /// <https://docs.kernel.org/admin-guide/cgroup-v2.html#no-internal-process-constraint>).
    NoControllers {
        /// What this process's cgroup is, in words (a systemd unit, a
        /// container, a login session).
        shape: String,
        /// This process's cgroup.
        own: PathBuf,
        /// The step's cgroup.
        leaf: PathBuf,
        /// The rung that measures IO instead.
        io_rung: Rung,
    },
    /// `--cgroup-parent` lies outside this process's cgroup: that cgroup's
    /// limits do not cover the step.
    ParentOutside {
        /// The parent asked for.
        parent: PathBuf,
        /// This process's cgroup.
        own: PathBuf,
    },
    /// The enclosing cgroup cannot be sampled.
    EnclosingUnreadable {
        /// The cgroup.
        cgroup: PathBuf,
        /// Why.
        error: String,
    },
    /// No cgroup v2 of the step's own; its cgroups in the v1 hierarchies
    /// and its process tree measure it.
    NoCgroupV2 {
        /// Why not.
        reason: String,
        /// The v1 hierarchies the step has a cgroup in.
        v1: Vec<String>,
    },
    /// No cgroup of the step's own; its process tree (and the enclosing
    /// cgroup) measure it.
    NoCgroup {
        /// Why not.
        reason: String,
        /// The enclosing cgroup sampled beside the tree, if any.
        enclosing: Option<PathBuf>,
        /// Whether that is the root cgroup (the whole machine).
        enclosing_is_root: bool,
    },
    /// No cgroup of the step's own because stepmon runs inside a container
    /// that allows none (a read-only cgroupfs); its process tree and the
    /// container's own cgroup measure it. (Made on Linux only: what a
    /// container is is read from procfs.)
    InContainer {
        /// The container.
        container: crate::Container,
        /// The container's cgroup directories sampled beside the tree.
        enclosing: Vec<PathBuf>,
    },
    /// This process runs in a systemd unit whose cgroup holds other
    /// processes, and systemd cannot be reached for a scope.
    SystemdUnreachable {
        /// The unit.
        unit: String,
        /// Why.
        error: String,
    },
    /// The step runs in a transient systemd scope bound to this process's
    /// unit.
    TransientScope {
        /// This process's unit.
        unit: String,
        /// The step's scope.
        scope: String,
        /// The bus socket systemd was asked over.
        socket: String,
    },
    /// The step gets no systemd scope.
    NoScope {
        /// Why.
        error: String,
    },
    /// Off Linux: what measures the step on this platform, and what is not
    /// measured (or kept) there.
    OffLinux {
        /// `Windows`, `macOS`, ...
        platform: String,
        /// What measures the step, in words.
        source: String,
        /// What is not measured or kept there, in words.
        not_measured: Vec<String>,
    },
}

impl Notice {
    /// Whether something went wrong (stepmon's words start with `warning:`)
    /// rather than a placement the user should know of (`notice:`).
    #[must_use]
    pub fn is_warning(&self) -> bool {
        matches!(self, Notice::CleanupFailed { .. } | Notice::EnclosingUnreadable { .. })
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::CleanupFailed { under: Some(under), error } => {
                write!(f, "warning: cleaning up earlier runs under {}: {error}", under.display())
            }
            Notice::CleanupFailed { under: None, error } => {
                write!(f, "warning: cleaning up earlier runs in the cgroup v1 hierarchies: {error}")
            }
            Notice::NoControllers { shape, own, leaf, io_rung } => write!(
                f,
                "notice: stepmon runs in {shape} ({}), whose children can get no controller: the step's cgroup {} \
                 has CPU time and stall only; memory and pids come from the enclosing cgroup, IO from the process \
                 tree (rung {}), each number labelled; --cgroup-parent DIR at an ancestor whose \
                 cgroup.subtree_control lists the controllers gives the step all of them",
                own.display(),
                leaf.display(),
                io_rung.as_str()
            ),
            Notice::ParentOutside { parent, own } => write!(
                f,
                "notice: the step's cgroup goes under --cgroup-parent {}, outside stepmon's own cgroup {}: that \
                 cgroup's limits do not cover the step, and stopping what manages it (a cancelled job) does not \
                 stop the step (stepmon still kills it when it ends)",
                parent.display(),
                own.display()
            ),
            Notice::EnclosingUnreadable { cgroup, error } => {
                write!(f, "warning: cannot sample the enclosing cgroup {}: {error}", cgroup.display())
            }
            Notice::NoCgroupV2 { reason, v1 } => write!(
                f,
                "notice: the step gets no cgroup v2 of its own ({reason}); its cgroups in the v1 hierarchies ({}) \
                 and its process tree measure it, each number labelled with its source",
                v1.join(", ")
            ),
            Notice::NoCgroup { reason, enclosing, enclosing_is_root } => {
                let around = match enclosing {
                    Some(dir) if *enclosing_is_root => {
                        format!(" and the root cgroup {} (the whole machine)", dir.display())
                    }
                    Some(dir) => format!(" and the enclosing cgroup {}", dir.display()),
                    None => String::new(),
                };
                write!(
                    f,
                    "notice: the step gets no cgroup of its own ({reason}); measuring its process tree{around} \
                     instead, each number labelled with its source (--require-cgroup refuses instead)"
                )
            }
            Notice::InContainer { container, enclosing } => {
                let around = match enclosing.as_slice() {
                    [] => String::new(),
                    dirs => format!(
                        " and the container's own cgroup ({})",
                        dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
                    ),
                };
                let ways = container.ways_out().map_or_else(String::new, |w| format!("; {w}"));
                write!(
                    f,
                    "notice: stepmon runs inside a container ({}: {}), so the step gets no cgroup of its own; \
                     measuring its process tree{around} instead, each number labelled with its source{ways}",
                    container.runtime(),
                    container.allows(),
                )
            }
            Notice::SystemdUnreachable { unit, error } => write!(
                f,
                "notice: this process runs in the systemd unit {unit}, whose cgroup holds other processes, but \
                 systemd cannot be reached for a scope of the step's own ({error})"
            ),
            Notice::TransientScope { unit, scope, socket } => write!(
                f,
                "notice: stepmon runs in the systemd unit {unit}, whose cgroup holds other processes: the step gets \
                 a transient scope {scope} from systemd (asked over {socket}; rung systemdScope), bound to {unit} so \
                 that stopping {unit} stops the step; it runs outside {unit}'s cgroup, so {unit}'s own limits do not \
                 cover it"
            ),
            Notice::NoScope { error } => write!(f, "notice: the step gets no systemd scope: {error}"),
            Notice::OffLinux { platform, source, not_measured } => {
                write!(f, "notice: on {platform} the step is measured through {source}, each number labelled")?;
                if !not_measured.is_empty() {
                    write!(f, "; not measured there: {}", not_measured.join("; "))?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_stepmons_and_the_warnings_say_so() {
        let cleanup = Notice::CleanupFailed { under: Some("/sys/fs/cgroup/a".into()), error: "EBUSY".into() };
        assert_eq!(cleanup.to_string(), "warning: cleaning up earlier runs under /sys/fs/cgroup/a: EBUSY");
        assert!(cleanup.is_warning());
        let v1 = Notice::CleanupFailed { under: None, error: "EBUSY".into() };
        assert_eq!(v1.to_string(), "warning: cleaning up earlier runs in the cgroup v1 hierarchies: EBUSY");
        let none = Notice::NoCgroup {
            reason: "not root".into(),
            enclosing: Some("/user.slice".into()),
            enclosing_is_root: false,
        };
        assert_eq!(
            none.to_string(),
            "notice: the step gets no cgroup of its own (not root); measuring its process tree and the enclosing \
             cgroup /user.slice instead, each number labelled with its source (--require-cgroup refuses instead)"
        );
        assert!(!none.is_warning());
        let root = Notice::NoCgroup { reason: "x".into(), enclosing: Some("/".into()), enclosing_is_root: true };
        assert!(root.to_string().contains(" and the root cgroup / (the whole machine) instead"), "{root}");
        let v2 = Notice::NoCgroupV2 { reason: "hybrid".into(), v1: vec!["memory".into(), "pids".into()] };
        assert_eq!(
            v2.to_string(),
            "notice: the step gets no cgroup v2 of its own (hybrid); its cgroups in the v1 hierarchies (memory, \
             pids) and its process tree measure it, each number labelled with its source"
        );
        let shape = Notice::NoControllers {
            shape: "the systemd scope s.scope".into(),
            own: "/s.scope".into(),
            leaf: "/s.scope/step".into(),
            io_rung: Rung::ProcessTree,
        };
        assert!(shape.to_string().starts_with(
            "notice: stepmon runs in the systemd scope s.scope (/s.scope), whose children can get no controller: \
             the step's cgroup /s.scope/step has CPU time and stall only;"
        ));
        assert!(shape.to_string().contains("(rung processTree), each number labelled; --cgroup-parent DIR"));
    }
}
