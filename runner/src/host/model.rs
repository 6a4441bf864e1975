//! The doctor's report as data: each check's outcome, the controller lists
//! and the whole report that `stepmon doctor --json` prints.

use std::path::PathBuf;

use serde::Serialize;

use super::v1_binding::V1Binding;
use super::{rungs, shape};

/// Outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Works.
    Ok,
    /// Does not work here; `reason` says why.
    Missing,
    /// Cannot be told on this host; `reason` says why.
    Unknown,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// The outcome.
    pub status: Status,
    /// What was found (empty when `reason` says it all).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Why it is missing or unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Check {
    pub(super) fn ok(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check { name: name.into(), status: Status::Ok, detail: detail.into(), reason: None, hint: None }
    }

    pub(super) fn not(
        status: Status,
        name: impl Into<String>,
        reason: impl Into<String>,
        hint: Option<String>,
    ) -> Check {
        Check { name: name.into(), status, detail: String::new(), reason: Some(reason.into()), hint }
    }
}

/// Controller lists as the kernel shows them.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Controllers {
    /// `cgroup.controllers` of the cgroup2 root.
    pub root: Vec<String>,
    /// `cgroup.controllers` of this process's cgroup.
    pub own: Vec<String>,
    /// `cgroup.subtree_control` of this process's cgroup: what a run's
    /// parent cgroup gets.
    pub own_subtree_control: Vec<String>,
    /// Controllers bound to cgroup v1 hierarchies (from `/proc/self/cgroup`).
    pub cgroup_v1: Vec<V1Binding>,
}

/// The whole report (`--json`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `uname -r`.
    pub kernel: String,
    /// `unified` (cgroup v2 only), `hybrid` (v2 beside v1 hierarchies),
    /// `v1-only` or `none`.
    pub layout: &'static str,
    /// Where cgroup2 is mounted.
    pub cgroup2_mount: Option<PathBuf>,
    /// This process's cgroup v2 directory.
    pub own_cgroup: Option<PathBuf>,
    /// Effective user ID.
    pub euid: u32,
    /// Controller lists.
    pub controllers: Controllers,
    /// `/sys/kernel/cgroup/delegate`: the files a delegation hands over.
    pub delegate_files: Vec<String>,
    /// `/sys/kernel/cgroup/features`.
    pub cgroup_features: Vec<String>,
    /// Whether a step gets a cgroup of its own here (cgroup v2 found, a run
    /// cgroup can be created). Without one `stepmon run` still runs and
    /// measures the step, from the rungs below.
    pub step_cgroup: bool,
    /// The shape of this process's cgroup ([`shape::Shape`]), which decides
    /// the rung; `None` without cgroup v2.
    pub shape: Option<shape::Shape>,
    /// Per resource, the rung of the measurement ladder a step gets here.
    pub rungs: Vec<rungs::ResourceRung>,
    /// One entry per check.
    pub checks: Vec<Check>,
}
