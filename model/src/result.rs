//! A finished step's numbers as a small typed value, for a builder that maps
//! them onto its own records (Buck2's `CommandExecutionStats`, Bazel's
//! `SpawnMetrics`) without reading the whole [`RunDocument`]: each number
//! with where it came from ([`Rung`]), its [`Bound`], whether it is the
//! largest of samples rather than a kernel counter, and why it is absent —
//! plus what stepmon itself cost for the step ([`Cost`]).
//!
//! ```
//! use stepmon_model::result::StepResult;
//! use stepmon_model::RunDocument;
//!
//! let json = r#"{"resourceUsage": {"samples": []},
//!   "stepmon": {"command": ["make"], "exitCode": 0, "notMeasured": ["memory: no memory controller"]}}"#;
//! let mut document: RunDocument = serde_json::from_str(json)?;
//! document.stepmon.as_mut().unwrap().summary.wall_seconds = Some(2.0);
//! let result = StepResult::of(&document, Default::default());
//! assert_eq!(result.exit, stepmon_model::result::Exit::Code(0));
//! assert_eq!(result.memory_peak_bytes.value, None);
//! assert_eq!(result.memory_peak_bytes.missing.as_deref(), Some("memory: no memory controller"));
//! println!("{result}");
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;

use crate::document::{RunDocument, RunInfo};
use crate::source::{Bound, Group, Rung, Source};

/// How the step's first process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
    /// Not known (an old or partial document).
    Unknown,
}

/// One number of the step.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Reading<T> {
    /// The value; `None` when not measured ([`Reading::missing`] says why).
    pub value: Option<T>,
    /// Where it came from.
    pub rung: Option<Rung>,
    /// Exact, or a bound of the true value.
    pub bound: Option<Bound>,
    /// The largest of periodic samples rather than a kernel's own peak or
    /// counter (a lower bound, what lived between two samples is missed).
    pub sampled: bool,
    /// Why it is absent, as the document says it (`notMeasured`).
    pub missing: Option<String>,
}

impl<T> Reading<T> {
    fn new(value: Option<T>, source: Option<&Source>, run: &RunInfo, words: &[&str]) -> Reading<T> {
        let missing = if value.is_some() {
            None
        } else {
            // A reason that starts with the group's word (`io: …`) first: a
            // word can be inside another group's reason ("function").
            let starts =
                |n: &&String| words.iter().any(|w| n.strip_prefix(w).is_some_and(|rest| rest.starts_with(':')));
            let said = (run.not_measured.iter().find(starts))
                .or_else(|| run.not_measured.iter().find(|n| words.iter().any(|w| n.contains(w))))
                .cloned();
            Some(said.unwrap_or_else(|| "not in the step's samples".to_owned()))
        };
        // A lower bound from a cgroup's gauge, or the process tree's sampled memory.
        let cgroup = source.is_some_and(|s| {
            matches!(
                s.rung,
                Rung::CgroupV2 | Rung::CgroupV1 | Rung::SystemdScope | Rung::EnclosingCgroup | Rung::ProcessTree
            )
        });
        Reading {
            sampled: value.is_some() && cgroup && source.is_some_and(|s| s.bound == Bound::LowerBound),
            rung: value.as_ref().and(source.map(|s| s.rung)),
            bound: value.as_ref().and(source.map(|s| s.bound)),
            value,
            missing,
        }
    }
}

/// What stepmon itself cost for the step, as the caller measured it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct Cost {
    /// From the start call to the step's first process created in its
    /// cgroups (placement, the subreaper, the spawn), s.
    pub placement_seconds: Option<f64>,
    /// CPU of the calling process during the step (every thread of it: with
    /// steps at once in one process, theirs too), s.
    pub collector_cpu_seconds: Option<f64>,
    /// From the step's first process's exit to its result (leftovers killed,
    /// final samples, cgroups removed), s.
    pub exit_to_result_seconds: Option<f64>,
}

/// A finished step's numbers; see the module docs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StepResult {
    /// How its first process ended.
    pub exit: Exit,
    /// From its start to its first process's exit, s.
    pub wall_seconds: Option<f64>,
    /// User CPU, s.
    pub cpu_user_seconds: Reading<f64>,
    /// System CPU, s.
    pub cpu_system_seconds: Reading<f64>,
    /// Time its CPU limit throttled it, s.
    pub cpu_throttled_seconds: Reading<f64>,
    /// Memory peak, bytes.
    pub memory_peak_bytes: Reading<u64>,
    /// Storage read, bytes.
    pub io_read_bytes: Reading<u64>,
    /// Storage written, bytes.
    pub io_write_bytes: Reading<u64>,
    /// The most processes and threads at once.
    pub pids_peak: Reading<u64>,
    /// Time some of its tasks waited for a CPU, s.
    pub cpu_stall_seconds: Reading<f64>,
    /// Time some of its tasks waited for memory, s.
    pub memory_stall_seconds: Reading<f64>,
    /// Time some of its tasks waited for IO, s.
    pub io_stall_seconds: Reading<f64>,
    /// Processes the kernel's OOM killer killed.
    pub oom_kills: Reading<u64>,
    /// Processes of its tree reaped (its first one and its orphans).
    pub processes_reaped: Option<u64>,
    /// Processes left behind at its end and killed.
    pub leftovers_killed: Option<u64>,
    /// What stepmon cost for it.
    pub cost: Cost,
}

impl StepResult {
    /// The numbers of `document`'s step (its `stepmon.summary` and sources,
    /// which the runner fills), with `cost` as the caller measured it.
    #[must_use]
    pub fn of(document: &RunDocument, cost: Cost) -> StepResult {
        let default = RunInfo::default();
        let run = document.stepmon.as_ref().unwrap_or(&default);
        let s = &run.summary;
        let source = |group| run.sources.get(group);
        let exit = match (run.exit_code, run.signal) {
            (_, Some(signal)) => Exit::Signal(signal),
            (Some(code), None) => Exit::Code(code),
            (None, None) => Exit::Unknown,
        };
        let cpu = source(Group::Cpu);
        let memory = source(Group::Memory);
        let io = source(Group::Io);
        let pressure = source(Group::Pressure);
        StepResult {
            exit,
            wall_seconds: s.wall_seconds,
            cpu_user_seconds: Reading::new(s.cpu.user_seconds, cpu, run, &["cpu"]),
            cpu_system_seconds: Reading::new(s.cpu.system_seconds, cpu, run, &["cpu"]),
            cpu_throttled_seconds: Reading::new(s.cpu.throttled_seconds, cpu, run, &["throttl", "cpu controller"]),
            memory_peak_bytes: Reading::new(s.memory.peak_bytes, memory, run, &["memory"]),
            io_read_bytes: Reading::new(s.io.read_bytes, io, run, &["io", "IO"]),
            io_write_bytes: Reading::new(s.io.write_bytes, io, run, &["io", "IO"]),
            pids_peak: Reading::new(s.pids_peak, source(Group::Pids), run, &["pids"]),
            cpu_stall_seconds: Reading::new(s.cpu_stall.some_seconds, pressure, run, &["stall", "pressure"]),
            memory_stall_seconds: Reading::new(s.memory_stall.some_seconds, pressure, run, &["stall", "pressure"]),
            io_stall_seconds: Reading::new(s.io_stall.some_seconds, pressure, run, &["stall", "pressure"]),
            oom_kills: Reading::new(s.memory.oom_kills, memory, run, &["memory"]),
            processes_reaped: run.process_tree.map(|t| t.processes_reaped),
            leftovers_killed: run.process_tree.map(|t| t.leftovers_killed),
            cost,
        }
    }
}

/// `1.23 s`, `45.6 ms`.
fn seconds(f: &mut fmt::Formatter<'_>, s: f64) -> fmt::Result {
    if s >= 1.0 { write!(f, "{s:.2} s") } else { write!(f, "{:.1} ms", s * 1e3) }
}

/// `101.2 MiB`.
fn bytes(f: &mut fmt::Formatter<'_>, b: u64) -> fmt::Result {
    #[allow(clippy::cast_precision_loss)] // shown to one decimal
    let b = b as f64;
    match b {
        b if b >= f64::from(1u32 << 30) => write!(f, "{:.1} GiB", b / f64::from(1u32 << 30)),
        b if b >= f64::from(1u32 << 20) => write!(f, "{:.1} MiB", b / f64::from(1u32 << 20)),
        b if b >= 1024.0 => write!(f, "{:.1} KiB", b / 1024.0),
        b => write!(f, "{b} B"),
    }
}

fn bound(f: &mut fmt::Formatter<'_>, reading_bound: Option<Bound>) -> fmt::Result {
    match reading_bound {
        Some(Bound::LowerBound) => f.write_str(" (at least)"),
        Some(Bound::UpperBound) => f.write_str(" (at most)"),
        _ => Ok(()),
    }
}

/// One line: `exit 0, wall 1.23 s, cpu 80.2 ms (user 10.1 ms), memory peak
/// 101.2 MiB, io 0 B read 0 B written, pids 4, stall cpu 1.0 ms`; what was
/// not measured is left out.
impl fmt::Display for StepResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.exit {
            Exit::Code(code) => write!(f, "exit {code}")?,
            Exit::Signal(signal) => write!(f, "killed by signal {signal}")?,
            Exit::Unknown => f.write_str("exit unknown")?,
        }
        if let Some(wall) = self.wall_seconds {
            f.write_str(", wall ")?;
            seconds(f, wall)?;
        }
        if let (Some(user), Some(system)) = (self.cpu_user_seconds.value, self.cpu_system_seconds.value) {
            f.write_str(", cpu ")?;
            seconds(f, user + system)?;
            f.write_str(" (user ")?;
            seconds(f, user)?;
            f.write_str(")")?;
        }
        if let Some(peak) = self.memory_peak_bytes.value {
            f.write_str(", memory peak ")?;
            bytes(f, peak)?;
            bound(f, self.memory_peak_bytes.bound)?;
        }
        if let (Some(read), Some(written)) = (self.io_read_bytes.value, self.io_write_bytes.value) {
            f.write_str(", io ")?;
            bytes(f, read)?;
            f.write_str(" read ")?;
            bytes(f, written)?;
            f.write_str(" written")?;
        }
        if let Some(pids) = self.pids_peak.value {
            write!(f, ", pids {pids}")?;
        }
        if let Some(stall) = self.cpu_stall_seconds.value {
            f.write_str(", stall cpu ")?;
            seconds(f, stall)?;
        }
        if let Some(killed) = self.leftovers_killed.filter(|k| *k > 0) {
            write!(f, ", {killed} left behind killed")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Source;

    fn document(json: &str) -> RunDocument {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn each_number_keeps_its_source_bound_and_reason() {
        let mut doc = document(r#"{"resourceUsage": {"samples": []}, "stepmon": {"command": ["cc"], "exitCode": 2}}"#);
        let run = doc.stepmon.as_mut().unwrap();
        run.summary.wall_seconds = Some(1.5);
        run.summary.cpu.user_seconds = Some(0.25);
        run.summary.cpu.system_seconds = Some(0.5);
        run.summary.memory.peak_bytes = Some(100 << 20);
        run.sources.cpu = Some(Source::exact(Rung::CgroupV2, "the step's cgroup"));
        run.sources.memory = Some(Source::lower_bound(Rung::EnclosingCgroup, "memory.current every sample"));
        run.not_measured = vec!["pids: no pids controller".to_owned(), "stall: none".to_owned()];
        let result = StepResult::of(&doc, Cost::default());
        assert_eq!(result.exit, Exit::Code(2));
        assert_eq!(
            (result.cpu_user_seconds.value, result.cpu_user_seconds.rung, result.cpu_user_seconds.sampled),
            (Some(0.25), Some(Rung::CgroupV2), false)
        );
        let memory = &result.memory_peak_bytes;
        assert_eq!((memory.bound, memory.sampled, memory.missing.as_deref()), (Some(Bound::LowerBound), true, None));
        assert_eq!(result.pids_peak.missing.as_deref(), Some("pids: no pids controller"));
        assert_eq!(result.cpu_stall_seconds.missing.as_deref(), Some("stall: none"));
        assert_eq!(result.io_read_bytes.missing.as_deref(), Some("not in the step's samples"));
        // The reason that names the group first, before one that has its word inside.
        let run = doc.stepmon.as_mut().unwrap();
        run.not_measured = vec!["cpu: Invalid function".to_owned(), "io: no counters".to_owned()];
        let result = StepResult::of(&doc, Cost::default());
        assert_eq!(result.io_read_bytes.missing.as_deref(), Some("io: no counters"));
        assert_eq!(
            result.to_string(),
            "exit 2, wall 1.50 s, cpu 750.0 ms (user 250.0 ms), memory peak 100.0 MiB (at least)"
        );
    }

    #[test]
    fn a_signal_wins_over_a_code() {
        let doc = document(
            r#"{"resourceUsage": {"samples": []}, "stepmon": {"command": ["cc"], "exitCode": 137, "signal": 9}}"#,
        );
        let result = StepResult::of(&doc, Cost::default());
        assert_eq!(result.exit, Exit::Signal(9));
        assert!(result.to_string().starts_with("killed by signal 9"));
    }
}
