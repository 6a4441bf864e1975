//! The step's options off Linux: those only cgroups or Linux's namespaces
//! can keep are refused (a limit silently not enforced would be worse), the
//! rest are kept or said to be ignored in the step's notice.

use crate::error::{RunError, RunErrorKind};
use crate::notice::Notice;
use crate::options::{CgroupMode, Mode, NetMode, StepOptions};

/// What a platform measures a step with, for its notice.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Platform {
    /// `Windows`, `macOS`, ...
    pub(crate) name: &'static str,
    /// What measures the step there, in words.
    pub(crate) source: &'static str,
    /// What is not measured there.
    pub(crate) not_measured: &'static [&'static str],
}

fn unsupported(platform: &Platform, what: &str) -> RunError {
    RunError::new(
        RunErrorKind::Unsupported,
        format!("{what} needs Linux (cgroups, network namespaces); not available on {}", platform.name),
    )
}

/// The step's notices, or why its options cannot be kept on `platform`.
pub(crate) fn check(options: &StepOptions, platform: &Platform) -> Result<Vec<Notice>, RunError> {
    if options.command.is_empty() {
        return Err(RunError::new(RunErrorKind::InvalidOptions, "no command given"));
    }
    if options.include_loopback && options.net == NetMode::Host {
        return Err(RunError::new(
            RunErrorKind::InvalidOptions,
            "counting loopback traffic needs a network namespace of the step's own",
        ));
    }
    if options.cgroup == CgroupMode::Require {
        return Err(RunError::with_source(
            RunErrorKind::NoCgroup,
            "a cgroup of the step's own is required, and none could be made",
            std::io::Error::new(std::io::ErrorKind::Unsupported, format!("{} has no cgroups", platform.name)),
        ));
    }
    if options.cgroup_parent.is_some() {
        return Err(unsupported(platform, "a cgroup parent"));
    }
    if options.limits.any() {
        return Err(unsupported(platform, "a limit of the step's cgroup"));
    }
    if options.net != NetMode::Host {
        return Err(unsupported(platform, "a network namespace of the step's own"));
    }
    if options.spawn_mode != Mode::Auto {
        return Err(unsupported(platform, "a spawn mode (clone3, fork)"));
    }
    let mut not_measured: Vec<String> = platform.not_measured.iter().map(|&s| s.to_owned()).collect();
    if options.live.is_some() {
        not_measured.push("live samples (StepOptions::live: its receiver gets none)".to_owned());
    }
    if options.watch.progress.is_some() || options.watch.on_event.is_some() {
        not_measured
            .push("progress and memory events while the step runs (StepOptions::watch: none are sent)".to_owned());
    }
    if options.forward_signals && cfg!(unix) {
        not_measured.push("signals are not forwarded to the step's process group".to_owned());
    }
    Ok(vec![Notice::OffLinux { platform: platform.name.to_owned(), source: platform.source.to_owned(), not_measured }])
}
