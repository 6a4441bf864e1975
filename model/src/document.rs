//! The JSON document `stepmon run --output` writes and `stepmon report`
//! reads back: BuildKit's `resourceUsage` and `sysUsage`, plus a `stepmon`
//! object about the run itself. Every `stepmon` field has a default so that
//! documents of older stepmon versions (and hand-trimmed ones) still load.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::labels::{CiContext, Label};
use crate::sample::{Samples, StepUsage, UsageSummary};
use crate::source::{Accounting, EnclosingCgroup, ProcessTree, Sources};
use crate::system::SysSample;
use crate::verdict::Verdicts;

/// What stepmon itself cost while monitoring.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Collector {
    /// stepmon's own CPU time (user + system, all its threads), s.
    pub cpu_seconds: Option<f64>,
    /// stepmon's peak resident memory, bytes.
    pub max_rss_bytes: Option<u64>,
    /// Step samples kept in the output.
    pub samples: usize,
    /// Machine samples kept in the output.
    pub sys_samples: usize,
    /// CPU time the samples of the process tree's memory took
    /// (`stepmon.processTree.memory`), s; part of `cpu_seconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_memory_cpu_seconds: Option<f64>,
}

/// The host as stepmon found it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Host {
    /// `uname -r`.
    pub kernel: String,
    /// The cgroup2 mount point.
    pub cgroup2_mount: String,
    /// `unified` (pure cgroup v2) or `hybrid`.
    pub cgroup_layout: String,
    /// Whether PSI is available (`/proc/pressure` exists).
    pub psi: bool,
}

/// A controller that could not be enabled for the step, and why.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NotEnabled {
    /// Controller name (`memory`, `io`, ...).
    pub controller: String,
    /// Why, in words.
    pub reason: String,
}

impl NotEnabled {
    /// A controller and the reason it is not enabled.
    #[must_use]
    pub fn new(controller: impl Into<String>, reason: impl Into<String>) -> Self {
        NotEnabled { controller: controller.into(), reason: reason.into() }
    }
}

/// stepmon's part of the document.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RunInfo {
    /// The command as given.
    pub command: Vec<String>,
    /// The step's name (`--name`, else the program's base name; absent in
    /// documents of older versions, whose steps are named by their command).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The caller's `--label KEY=VALUE`s, in the order given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    /// The CI job the step ran in, when its environment said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<CiContext>,
    /// What went wrong after the step (a push to a Pushgateway, a textfile
    /// that could not be written): the step's numbers are unaffected.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Exit code of the command, if it exited.
    pub exit_code: Option<i32>,
    /// Signal that killed the command, if any.
    pub signal: Option<i32>,
    /// When the step started.
    pub start: Option<Timestamp>,
    /// When it ended.
    pub end: Option<Timestamp>,
    /// The step's cgroup while it ran.
    pub cgroup: String,
    /// The step's cgroups in the cgroup v1 hierarchies (hybrid and v1-only
    /// hosts), one per hierarchy.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cgroup_v1: Vec<String>,
    /// Controllers enabled for the step.
    pub controllers: Vec<String>,
    /// Controllers that could not be enabled, and why.
    pub controllers_not_enabled: Vec<NotEnabled>,
    /// The host.
    pub host: Host,
    /// stepmon's own overhead.
    pub collector: Collector,
    /// The numbers of the summary.
    pub summary: UsageSummary,
    /// What the numbers mean (absent in documents of older versions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdicts: Option<Verdicts>,
    /// What to change next time (absent in documents of older versions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<crate::advice::Advice>,
    /// What was not measured, in words (also in each sample's `missing`).
    pub not_measured: Vec<String>,
    /// Where each field group's numbers came from (empty in documents of
    /// older versions: then everything is the step's cgroup).
    #[serde(skip_serializing_if = "Sources::is_empty")]
    pub sources: Sources,
    /// How the step was placed, in one line ("its own cgroup …", "no cgroup
    /// of its own: … — measured through its process tree").
    #[serde(skip_serializing_if = "String::is_empty")]
    pub placement: String,
    /// The step's process tree as stepmon reaped it (recorded on every rung;
    /// on a cgroup rung it is a cross-check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_tree: Option<ProcessTree>,
    /// What the operating system accounted for the step off Linux (a
    /// Windows job object, the first process's rusage on macOS and the
    /// BSDs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accounting: Option<Accounting>,
    /// The cgroup stepmon ran in, when it was sampled for the step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enclosing_cgroup: Option<EnclosingCgroup>,
    /// The step's processes one by one (taskstats), or why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<crate::processes::Processes>,
    /// What happened while the step ran, in time order (its memory near
    /// what bounds it, [`crate::event`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<crate::event::StepEvent>,
}

/// The whole document of one `stepmon run`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunDocument {
    /// BuildKit's `resourceUsage`.
    #[serde(default)]
    pub resource_usage: Samples,
    /// BuildKit's `sysUsage`.
    #[serde(default)]
    pub sys_usage: Vec<SysSample>,
    /// About the run (absent when only BuildKit's two keys are given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stepmon: Option<RunInfo>,
}

impl RunDocument {
    /// A document of a recorded step and what stepmon knows of the run.
    #[must_use]
    pub fn new(usage: StepUsage, run: RunInfo) -> Self {
        RunDocument { resource_usage: usage.resource_usage, sys_usage: usage.sys_usage, stepmon: Some(run) }
    }

    /// The recorded usage (a copy of the two BuildKit keys).
    #[must_use]
    pub fn usage(&self) -> StepUsage {
        StepUsage { resource_usage: self.resource_usage.clone(), sys_usage: self.sys_usage.clone() }
    }
}
