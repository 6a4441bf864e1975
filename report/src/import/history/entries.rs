//! A build as a job: each step a [`crate::job::Entry`] named with its
//! Dockerfile location, in its platform's group, so every job view
//! (table, Markdown, HTML, trace, OpenMetrics) draws a BuildKit build too.

use stepmon_sampler::model::StepUsage;

use super::build::{Build, StepState};
use crate::job::{Entry, StepStatus};
use crate::step::Step;

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
                Some(step) => Step { name: s.title(), ..step.clone() },
                None => {
                    let mut usage = StepUsage::default();
                    usage.sys_usage = window_samples(build, s.machine.from, s.machine.to);
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
                StepState::Incomplete => StepStatus::Interrupted { record_ends: build.completed },
            };
            let entry = Entry::of_run(step, format!("build {}", build.reference));
            let entry = Entry { status, ..entry };
            match &s.platform {
                Some(p) => entry.in_group(p.clone()),
                None => entry,
            }
        })
        .collect()
}

fn window_samples(
    build: &Build,
    from: Option<jiff::Timestamp>,
    to: Option<jiff::Timestamp>,
) -> Vec<stepmon_sysusage::model::SysSample> {
    let (Some(from), Some(to)) = (from, to) else { return Vec::new() };
    build.machine.iter().filter(|m| m.timestamp >= from && m.timestamp <= to).cloned().collect()
}
