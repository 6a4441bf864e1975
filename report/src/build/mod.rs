//! A build's report (`stepmon build`): the job record of one build — its
//! outer step, the whole build command measured in its cgroup, and one
//! step per compiler run (an action, recorded by `stepmon wrap` in a
//! cgroup nested inside the build's) — read as a build: every action's
//! numbers, the critical path ([`critical`]), the build's memory over time
//! and the actions running at its peak ([`memory`]), what was spent
//! outside every action (the [`Remainder`]), and the `-j` the action peaks
//! allow on this machine ([`workers`]).
//!
//! Every action is referred to by its place in the job ([`BuildAction::row`]
//! into [`Build::job`]), never by its name: two actions may share one.
//! No I/O: the record's text is read by [`crate::job::read`].
//!
//! ```
//! use stepmon_report::build::Build;
//! use stepmon_report::job;
//!
//! // An empty record has no build in it.
//! assert!(Build::of_record(&job::read(""), "job.jsonl", None).is_err());
//! ```

pub mod critical;
pub mod memory;
#[cfg(test)]
mod tests;
pub mod workers;

use stepmon_model::action::{Action, CrateKind};
use stepmon_model::advice::ParallelismAdvice;

use crate::job::table::{self, Job, Row};
use crate::job::{Entry, JobRecord, StepStatus};

pub use critical::CriticalPath;
pub use memory::BuildMemory;

/// What kind of action a step is, for the colour of its bar and the
/// counts by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ActionKind {
    /// rustc building a library (any library crate type).
    Lib,
    /// rustc building a binary.
    Bin,
    /// rustc building a proc-macro.
    ProcMacro,
    /// rustc building a build script.
    BuildScript,
    /// rustc building a test harness.
    Test,
    /// A C or C++ compile.
    Compile,
    /// A link by a compiler driver.
    Link,
    /// Anything else run through the launcher.
    Other,
}

impl ActionKind {
    /// Of `action`.
    #[must_use]
    pub fn of(action: Option<&Action>) -> ActionKind {
        match action {
            Some(Action::Crate(c)) => match c.kind {
                CrateKind::Bin => ActionKind::Bin,
                CrateKind::ProcMacro => ActionKind::ProcMacro,
                CrateKind::BuildScript => ActionKind::BuildScript,
                CrateKind::Test => ActionKind::Test,
                CrateKind::Other => ActionKind::Other,
                _ => ActionKind::Lib,
            },
            Some(Action::Compile(_)) => ActionKind::Compile,
            Some(Action::Link(_)) => ActionKind::Link,
            _ => ActionKind::Other,
        }
    }

    /// A name fit for a CSS class and a legend: `lib`, `bin`, `proc-macro`,
    /// `build-script`, `test`, `compile`, `link`, `other`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ActionKind::Lib => "lib",
            ActionKind::Bin => "bin",
            ActionKind::ProcMacro => "proc-macro",
            ActionKind::BuildScript => "build-script",
            ActionKind::Test => "test",
            ActionKind::Compile => "compile",
            ActionKind::Link => "link",
            ActionKind::Other => "other",
        }
    }

    /// Its words: as [`ActionKind::name`], with `build script` in two.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            ActionKind::BuildScript => "build script",
            other => other.name(),
        }
    }

    /// Every kind, in legend order.
    pub const ALL: [ActionKind; 8] = [
        ActionKind::Lib,
        ActionKind::Bin,
        ActionKind::ProcMacro,
        ActionKind::BuildScript,
        ActionKind::Test,
        ActionKind::Compile,
        ActionKind::Link,
        ActionKind::Other,
    ];
}

/// One action of the build.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BuildAction {
    /// Its row in [`Build::job`] (its numbers, its name): its place in the
    /// job is `row + 1`, as the job's views number it.
    pub row: usize,
    /// Its kind.
    pub kind: ActionKind,
    /// When it started and ended, seconds since the build's start; an
    /// action of unknown wall time ends where it starts.
    pub start: f64,
    /// See [`BuildAction::start`].
    pub end: f64,
    /// It failed: it ended with a status other than 0, could not run, or
    /// its record was interrupted.
    pub failed: bool,
}

impl BuildAction {
    /// Its wall time as placed (end − start).
    #[must_use]
    pub fn span(&self) -> f64 {
        self.end - self.start
    }
}

/// What the build spent outside every action: cargo (or make, ninja)
/// itself, the build scripts cargo runs, linkers a compiler driver calls
/// outside a launcher, anything the build command runs that is no
/// compiler.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Remainder {
    /// The build's CPU less every action's and probe's (each action's cgroup
    /// is nested inside the build's, so the build's counts them too);
    /// `None` when the build's CPU is unknown.
    pub cpu_seconds: Option<f64>,
    /// The build's wall time during which no action ran (every gap, also
    /// the short ones between two actions).
    pub idle_seconds: Option<f64>,
    /// Those stretches, `(from, to)` seconds since the build's start, the
    /// longest first (at most [`Remainder::STRETCHES`]).
    pub idle_stretches: Vec<(f64, f64)>,
    /// At the build's highest memory reading: that reading less the peaks
    /// of the actions running then — a lower bound of the memory held
    /// outside them (each action's peak is its most, not its use then).
    pub memory_at_peak_bytes: Option<u64>,
}

impl Remainder {
    /// How many idle stretches are kept.
    pub const STRETCHES: usize = 5;
}

/// What stepmon itself spent measuring the build: each step's collector
/// (`stepmon.collector.cpuSeconds`, user + system of all its threads).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct OwnCost {
    /// The launchers' (one per action and probe): each runs in the
    /// build's cgroup, beside its action's, so the build's CPU and its
    /// remainder count it. `None` when no step recorded it.
    pub launchers_cpu_seconds: Option<f64>,
    /// How many launchers recorded theirs.
    pub launchers: usize,
    /// The build's own step's (`stepmon build`'s collector, outside the
    /// build's cgroup).
    pub build_cpu_seconds: Option<f64>,
}

/// A build read from its job record.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Build {
    /// The job's table: one row per step (the build, its actions, its
    /// probes), by start.
    pub job: Job,
    /// The build's own step: its row in [`Build::job`].
    pub outer: usize,
    /// The build's wall time, CPU and memory peak (of its own cgroup, which
    /// holds every action's).
    pub wall_seconds: Option<f64>,
    /// See [`Build::wall_seconds`].
    pub cpu_seconds: Option<f64>,
    /// See [`Build::wall_seconds`].
    pub memory_peak_bytes: Option<u64>,
    /// Its status (the build command's exit code).
    pub exit_code: Option<i32>,
    /// The actions, by start (probes are not among them).
    pub actions: Vec<BuildAction>,
    /// Cargo's questions to rustc and build scripts' trial compiles: how
    /// many, and their CPU.
    pub probes: usize,
    /// See [`Build::probes`].
    pub probe_cpu_seconds: f64,
    /// What was spent outside the actions.
    pub remainder: Remainder,
    /// The chain of actions that bounded the build's wall time.
    pub critical_path: CriticalPath,
    /// The build's memory over time, and its peak moment.
    pub memory: BuildMemory,
    /// The `-j` the action peaks allow here.
    pub parallelism: ParallelismAdvice,
    /// The most actions running at once.
    pub most_at_once: usize,
    /// What stepmon itself spent.
    pub own_cost: OwnCost,
}

/// Why a record holds no build.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoBuild {
    /// No step of the record is a build's own (a step without an action).
    NoOuterStep,
    /// The step named as the build's is not in the record.
    NoSuchStep(String),
}

impl std::fmt::Display for NoBuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoBuild::NoOuterStep => {
                f.write_str("the record has no build step (a step that is no action): record it with `stepmon build`")
            }
            NoBuild::NoSuchStep(id) => write!(f, "the record has no step {id}"),
        }
    }
}

impl std::error::Error for NoBuild {}

impl Build {
    /// The build in `record` (read from the file `from`): its outer step is
    /// the step `outer` (its id), else the last step that is no action.
    ///
    /// # Errors
    /// [`NoBuild`] when the record has no such step.
    pub fn of_record(record: &JobRecord, from: &str, outer: Option<&str>) -> Result<Build, NoBuild> {
        let index = match outer {
            Some(id) => {
                record.steps.iter().position(|s| s.id == id).ok_or_else(|| NoBuild::NoSuchStep(id.to_owned()))?
            }
            None => record
                .steps
                .iter()
                .rposition(|s| {
                    s.start.as_ref().is_some_and(|s| !s.action.as_ref().is_some_and(Action::is_build_action))
                })
                .ok_or(NoBuild::NoOuterStep)?,
        };
        let entries: Vec<Entry> = record.steps.iter().map(|s| Entry::of_job(s, from.to_owned())).collect();
        let notes: Vec<String> = record.lost.iter().map(ToString::to_string).collect();
        Ok(Build::of_entries(&entries, index, &notes))
    }

    /// The build of `entries`, `entries[outer]` its own step; the actions
    /// are the entries with an action that is no probe that started while
    /// it ran. `notes`: the record's (lost lines).
    #[must_use]
    pub fn of_entries(entries: &[Entry], outer: usize, notes: &[String]) -> Build {
        let job = table::job(entries, notes);
        let outer_row = job.steps.iter().position(|r| r.entry == outer).unwrap_or(0);
        let origin = job.steps.get(outer_row).and_then(|r| r.start);
        let outer_step = entries.get(outer).map(|e| &e.step);
        let since = |row: &Row| row.start.zip(origin).map(|(s, o)| s.duration_since(o).as_secs_f64());
        let mut actions = Vec::new();
        let (mut probes, mut probe_cpu_seconds, mut nested_cpu) = (0, 0.0, 0.0);
        let collector_cpu =
            |row: &Row| entries.get(row.entry).and_then(|e| e.step.run.as_ref()).and_then(|r| r.collector.cpu_seconds);
        let mut own_cost =
            OwnCost { build_cpu_seconds: job.steps.get(outer_row).and_then(collector_cpu), ..OwnCost::default() };
        // The build's actions started while it ran: a record kept with
        // `--job` may hold other builds' too.
        let until =
            job.steps.get(outer_row).and_then(|r| r.wall_seconds).map_or(f64::INFINITY, |w| w + table::MIN_GAP_SECONDS);
        for (i, row) in job.steps.iter().enumerate() {
            let Some(action) = row.action.as_ref().filter(|a| a.is_build_action()) else { continue };
            let Some(start) = since(row).filter(|s| (-table::MIN_GAP_SECONDS..=until).contains(s)) else { continue };
            nested_cpu += row.cpu_seconds.unwrap_or(0.0);
            if let Some(cpu) = collector_cpu(row) {
                own_cost.launchers += 1;
                *own_cost.launchers_cpu_seconds.get_or_insert(0.0) += cpu;
            }
            if action.is_probe() {
                probes += 1;
                probe_cpu_seconds += row.cpu_seconds.unwrap_or(0.0);
                continue;
            }
            let wall = row.wall_seconds.filter(|w| w.is_finite() && *w > 0.0).unwrap_or(0.0);
            let failed = !matches!(entries.get(row.entry).map(|e| &e.status), Some(StepStatus::Ended { exit_code: 0 }));
            actions.push(BuildAction { row: i, kind: ActionKind::of(Some(action)), start, end: start + wall, failed });
        }
        let outer_numbers = job.steps.get(outer_row);
        let wall_seconds = outer_numbers.and_then(|r| r.wall_seconds);
        let cpu_seconds = outer_numbers.and_then(|r| r.cpu_seconds);
        let memory = outer_step.map_or_else(BuildMemory::default, |step| memory::of(step, &job, &actions));
        let idle = idle(&actions, wall_seconds);
        let remainder = Remainder {
            cpu_seconds: cpu_seconds.map(|c| (c - nested_cpu).max(0.0)),
            idle_seconds: idle.as_ref().map(|(total, _)| *total),
            idle_stretches: idle
                .map(|(_, mut stretches)| {
                    stretches.sort_by(|a, b| (b.1 - b.0).total_cmp(&(a.1 - a.0)));
                    stretches.truncate(Remainder::STRETCHES);
                    stretches
                })
                .unwrap_or_default(),
            memory_at_peak_bytes: memory.peak.as_ref().map(|p| p.outside_bytes),
        };
        let critical_path = critical::path(&actions, wall_seconds);
        let parallelism = match outer_step {
            Some(step) => workers::parallelism(step, &job, &actions),
            None => ParallelismAdvice::default(),
        };
        Build {
            outer: outer_row,
            wall_seconds,
            cpu_seconds,
            memory_peak_bytes: outer_numbers.and_then(|r| r.memory_peak_bytes),
            exit_code: outer_numbers.and_then(|r| r.exit_code),
            most_at_once: most_at_once(&actions),
            actions,
            probes,
            probe_cpu_seconds,
            remainder,
            critical_path,
            memory,
            parallelism,
            own_cost,
            job,
        }
    }

    /// The numbers of `action` (its row in the job).
    #[must_use]
    pub fn row(&self, action: &BuildAction) -> &Row {
        &self.job.steps[action.row]
    }

    /// The actions' indices (into [`Build::actions`]) by `key`, the largest
    /// first; actions without it last, in start order.
    #[must_use]
    pub fn ranked(&self, key: impl Fn(&Row) -> Option<f64>) -> Vec<usize> {
        crate::job::notable::ranked(&self.actions, |a| key(self.row(a)))
    }

    /// The actions by wall time, the longest first.
    #[must_use]
    pub fn by_wall(&self) -> Vec<usize> {
        self.ranked(|r| r.wall_seconds)
    }

    /// The actions by memory peak, the heaviest first.
    #[allow(clippy::cast_precision_loss)]
    #[must_use]
    pub fn by_peak(&self) -> Vec<usize> {
        self.ranked(|r| r.memory_peak_bytes.map(|b| b as f64))
    }

    /// The actions that matter, to be shown in detail: the `top` longest,
    /// the `top` heaviest, the `top` longest on the critical path (a chain
    /// of thousands in a large build) and the first
    /// [`Build::NOTABLE_FAILED`] that failed (indices into
    /// [`Build::actions`], in start order).
    #[must_use]
    pub fn notable(&self, top: usize) -> Vec<usize> {
        let mut keep = vec![false; self.actions.len()];
        let mut on_path = self.critical_path.actions.clone();
        on_path.sort_by(|a, b| self.actions[*b].span().total_cmp(&self.actions[*a].span()).then(a.cmp(b)));
        let failed = self.actions.iter().enumerate().filter(|(_, a)| a.failed).map(|(i, _)| i);
        for i in self.by_wall().into_iter().take(top).chain(self.by_peak().into_iter().take(top)) {
            keep[i] = true;
        }
        for i in on_path.into_iter().take(top).chain(failed.take(Build::NOTABLE_FAILED)) {
            keep[i] = true;
        }
        keep.iter().enumerate().filter(|(_, k)| **k).map(|(i, _)| i).collect()
    }

    /// How many failed actions [`Build::notable`] keeps at most (the table
    /// of every action marks the rest).
    pub const NOTABLE_FAILED: usize = 100;

    /// For each action, whether it is on the critical path.
    #[must_use]
    pub fn on_critical_path(&self) -> Vec<bool> {
        let mut on = vec![false; self.actions.len()];
        for &i in &self.critical_path.actions {
            on[i] = true;
        }
        on
    }

    /// The actions that failed (indices into [`Build::actions`]).
    #[must_use]
    pub fn failed(&self) -> Vec<usize> {
        self.actions.iter().enumerate().filter(|(_, a)| a.failed).map(|(i, _)| i).collect()
    }
}

/// The build's wall time in which no action ran, and those stretches of
/// it at least [`table::MIN_GAP_SECONDS`] long (before the first action
/// and after the last included); `None` when the build's wall time is
/// unknown.
fn idle(actions: &[BuildAction], wall: Option<f64>) -> Option<(f64, Vec<(f64, f64)>)> {
    let wall = wall?;
    let mut spans: Vec<(f64, f64)> = actions.iter().map(|a| (a.start, a.end)).collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut total, mut stretches) = (0.0, Vec::new());
    let mut reach = 0.0_f64;
    for (start, end) in spans.into_iter().chain([(wall, wall)]) {
        let gap = start.min(wall) - reach;
        if gap > 0.0 {
            total += gap;
            if gap >= table::MIN_GAP_SECONDS {
                stretches.push((reach, start.min(wall)));
            }
        }
        reach = reach.max(end);
    }
    Some((total, stretches))
}

/// The most actions running at one instant (one that ends the instant
/// another starts did not run beside it).
#[must_use]
pub fn most_at_once(actions: &[BuildAction]) -> usize {
    let mut events: Vec<(f64, i8)> =
        actions.iter().flat_map(|a| [(a.start, 1), (a.end.max(a.start + 1e-6), -1)]).collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most) = (0_i64, 0_i64);
    for (_, step) in events {
        now += i64::from(step);
        most = most.max(now);
    }
    usize::try_from(most).unwrap_or(0)
}
