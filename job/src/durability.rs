//! When a step's end is synced to disk ([`Durability`]).
//!
//! Every line is appended with one `write(2)`: once it returns, the line is
//! in the kernel's page cache, whole, and readers see it. Nothing a process
//! does loses it after that — a stepmon, a build or a CI job killed (even by
//! SIGKILL) leaves every line it wrote. Only the machine going away (a power
//! cut, a kernel crash, a VM torn down) loses lines not yet written back to
//! the disk: the kernel writes a dirty page back once it is
//! `vm.dirty_expire_centisecs` old (30 s by default), its flusher waking
//! every `vm.dirty_writeback_centisecs` (5 s)
//! (<https://docs.kernel.org/admin-guide/sysctl/vm.html>), and a line
//! torn by such a crash is read as lost.
//!
//! `fdatasync(2)` writes the file's data back now and waits for it — for
//! every writer's lines, since it syncs the file, not a descriptor. It
//! waits for the disk and, on a journaling file system, for the journal's
//! commit, which a build writing its target directory at the same time
//! makes wait its turn: milliseconds for a step that takes milliseconds.
//! So the default, [`Durability::LongSteps`], syncs the end of a step that
//! ran [`LONG_STEP`] or longer (the sync is noise beside it, and such a
//! step is the one worth keeping) and leaves the ends of shorter steps —
//! a build's many compiler actions — to the kernel's write-back, or to the
//! next long step's sync, which syncs them too: a build's outer step
//! syncs every action before it once, at its end.

use std::time::Duration;

use crate::error::JobError;

/// How long a step runs before its end is synced under
/// [`Durability::LongSteps`]: a sync that waits even 50 ms for a busy
/// journal is 0.5% of it.
pub const LONG_STEP: Duration = Duration::from_secs(10);

/// When [`JobWriter::end`](crate::JobWriter::end) syncs the record to disk
/// (`fdatasync(2)`) after appending a step's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// Every step's end: a step that ended survives the machine going away
    /// once its writer returns. Costs each step a sync (milliseconds under
    /// a build's write load).
    EveryStep,
    /// The end of a step that ran [`LONG_STEP`] or longer; shorter steps'
    /// ends are written back by the kernel (within about 35 s by default),
    /// or synced with the next long step's end, whichever comes first.
    #[default]
    LongSteps,
    /// Never: the kernel writes the record back. For a record on a
    /// scratch or memory file system, or one that is copied away whole.
    WriteBack,
}

impl Durability {
    /// The environment variable that chooses a writer's durability
    /// ([`Durability::from_env`]).
    pub const ENV: &'static str = "STEPMON_JOB_SYNC";

    /// Its name in [`Durability::ENV`]: `every`, `long` or `none`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Durability::EveryStep => "every",
            Durability::LongSteps => "long",
            Durability::WriteBack => "none",
        }
    }

    /// The durability [`Durability::ENV`] (`STEPMON_JOB_SYNC`) names: `every`, `long`
    /// or `none`; unset or empty: [`Durability::LongSteps`].
    ///
    /// # Errors
    /// [`JobError::Durability`] for any other value.
    pub fn from_env() -> Result<Durability, JobError> {
        Durability::parse(&std::env::var(Durability::ENV).unwrap_or_default())
    }

    /// The durability `value` names (as [`Durability::from_env`] reads it).
    ///
    /// ```
    /// use stepmon_job::Durability;
    /// assert_eq!(Durability::parse("every")?, Durability::EveryStep);
    /// assert_eq!(Durability::parse("")?, Durability::LongSteps);
    /// assert!(Durability::parse("always").is_err());
    /// # Ok::<(), stepmon_job::JobError>(())
    /// ```
    ///
    /// # Errors
    /// [`JobError::Durability`] for a value other than `every`, `long`,
    /// `none` or empty.
    pub fn parse(value: &str) -> Result<Durability, JobError> {
        match value {
            "every" => Ok(Durability::EveryStep),
            "long" | "" => Ok(Durability::LongSteps),
            "none" => Ok(Durability::WriteBack),
            other => Err(JobError::Durability { value: other.to_owned() }),
        }
    }

    /// Whether the end of a step that ran for `ran` is synced.
    #[must_use]
    pub fn syncs(self, ran: Duration) -> bool {
        match self {
            Durability::EveryStep => true,
            Durability::LongSteps => ran >= LONG_STEP,
            Durability::WriteBack => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_reads_back_and_only_long_steps_are_synced_by_default() {
        for durability in [Durability::EveryStep, Durability::LongSteps, Durability::WriteBack] {
            assert_eq!(Durability::parse(durability.name()).unwrap(), durability);
        }
        assert_eq!(Durability::default(), Durability::LongSteps);
        let short = Duration::from_millis(3);
        assert!(!Durability::LongSteps.syncs(short) && Durability::LongSteps.syncs(LONG_STEP));
        assert!(Durability::EveryStep.syncs(short) && !Durability::WriteBack.syncs(LONG_STEP * 100));
        let wrong = Durability::parse("yes").unwrap_err();
        assert_eq!(wrong.to_string(), "STEPMON_JOB_SYNC=\"yes\": not every, long or none");
    }
}
