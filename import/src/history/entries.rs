//! A build as a job: each step a [`stepmon_report::job::Entry`] named with its
//! Dockerfile location, in its platform's group, so every job view
//! (table, Markdown, HTML, trace, OpenMetrics) draws a BuildKit build too.

use stepmon_model::sample::StepUsage;

use super::build::{Build, StepState};
use stepmon_report::job::{Entry, StepStatus};
use stepmon_report::step::Step;

/// Exit status given to a failed BuildKit step when the record's error
/// details carry none (`ExitMessage`).
const FAILED_EXIT: i32 = 1;

/// The build's steps as job entries, by start time. Steps without per-step
/// usage still appear, with their vertex timing and the machine samples of
/// their window; `from` names the build.
#[must_use]
pub fn entries(build: &Build) -> Vec<Entry> {
    build
        .steps
        .iter()
        .map(|s| {
            let step = match &s.usage {
                Some(step) => {
                    let mut step = step.clone();
                    step.name = s.title();
                    step
                }
                None => {
                    let usage = StepUsage {
                        sys_usage: window_samples(build, s.machine.from, s.machine.to),
                        ..StepUsage::default()
                    };
                    Step::from_buildkit(s.title(), s.digest.clone(), Some(s.digest.clone()), usage)
                        .with_vertex_timing(s.started, s.completed)
                }
            };
            let status = match &s.state {
                StepState::Executed => StepStatus::Ended { exit_code: 0 },
                StepState::Cached => StepStatus::Cached,
                StepState::Failed { error } => {
                    StepStatus::NotRun { exit_code: s.exit_code.unwrap_or(FAILED_EXIT), error: error.clone() }
                }
                StepState::Incomplete | StepState::Unrecorded => {
                    StepStatus::Interrupted { record_ends: build.completed, torn: None }
                }
            };
            let mut entry = Entry::of_run(step, format!("build {}", build.reference));
            entry.status = status;
            match &s.platform {
                Some(p) => entry.in_group(p.clone()),
                None => entry,
            }
        })
        .collect()
}

/// The steps of `builds` as one side of a diff (`stepmon diff`, which
/// pairs steps by name): each named with its platform
/// (`[2/2] RUN make (Dockerfile:3) [linux/arm64]`, the job table's shown
/// name), since a multi-platform build runs each step once per platform and
/// the platforms' order differs between builds. The steps that never
/// completed are left out, as a job's interrupted steps are (their numbers
/// stop where the build did), and returned by name.
#[must_use]
pub fn diff_entries(builds: &[Build]) -> (Vec<Entry>, Vec<String>) {
    let (mut kept, mut left_out) = (Vec::new(), Vec::new());
    for mut entry in builds.iter().flat_map(entries) {
        if let Some(group) = &entry.group {
            entry.step.name = format!("{} [{group}]", entry.step.name);
        }
        match entry.status {
            StepStatus::Interrupted { .. } => left_out.push(entry.step.name),
            _ => kept.push(entry),
        }
    }
    (kept, left_out)
}

fn window_samples(
    build: &Build,
    from: Option<jiff::Timestamp>,
    to: Option<jiff::Timestamp>,
) -> Vec<stepmon_model::system::SysSample> {
    let (Some(from), Some(to)) = (from, to) else { return Vec::new() };
    build.machine.iter().filter(|m| m.timestamp >= from && m.timestamp <= to).cloned().collect()
}
