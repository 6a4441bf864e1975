//! One BuildKit build as the report sees it: its steps (vertexes) with
//! their real timeline, what the provenance adds to each, the critical path
//! and the machine while each step ran.

use jiff::Timestamp;
use serde::Serialize;
use stepmon_model::system::SysSample;

use super::provenance::Provenance;
use super::record::HistoryRecord;
use super::status::{Status, Vertex};
use stepmon_report::step::Step;

/// A step that kept the machine's CPUs at least this busy (share of all
/// CPU time, from `sysUsage`'s `/proc/stat` deltas) ran while the machine
/// was saturated.
pub const SATURATED_BUSY_SHARE: f64 = 0.90;
/// ... or while some task waited for CPU at least this share of the time
/// (`/proc/pressure/cpu` `some`; the threshold of the machine verdict,
/// [`stepmon_model::verdict::Thresholds::machine_stall_share`]).
pub const SATURATED_STALL_SHARE: f64 = 0.10;

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "state")]
#[non_exhaustive]
pub enum StepState {
    /// It ran and completed.
    Executed,
    /// Its result came from the cache.
    Cached,
    /// It failed.
    Failed {
        /// BuildKit's error.
        error: String,
    },
    /// It never completed (the build stopped first: cancelled, or another
    /// step failed).
    Incomplete,
    /// In the build's definition, with no record of how it ended: a bare
    /// provenance predicate lists every step of the build but neither
    /// whether it ran or came from the cache, nor when
    /// ([`super::of_predicate`]).
    Unrecorded,
}

/// The machine over a step's window, from the build's `sysUsage`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct MachineWindow {
    /// The machine samples the deltas are between (the last at or before the
    /// start, the first at or after the end: BuildKit samples every ≥ 2 s).
    pub from: Option<Timestamp>,
    /// See `from`.
    pub to: Option<Timestamp>,
    /// Share of all CPU time that was busy (not idle, not iowait).
    pub cpu_busy_share: Option<f64>,
    /// Share of the time some task on the machine waited for CPU.
    pub cpu_stall_share: Option<f64>,
    /// Whether the machine was saturated: `None` when unknown.
    pub saturated: Option<bool>,
}

/// One step (vertex) of the build.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BuildStep {
    /// The vertex digest.
    pub digest: String,
    /// Its progress name without the platform prefix (`RUN make`).
    pub name: String,
    /// BuildKit's progress name as recorded (`[linux/amd64 2/3] RUN make`).
    pub vertex_name: String,
    /// The platform, from the provenance's `op.platform`, else the name.
    pub platform: Option<String>,
    /// `Dockerfile:12`.
    pub location: Option<String>,
    /// The RUN command, when the provenance has it.
    pub command: Option<String>,
    /// Input vertex digests.
    pub inputs: Vec<String>,
    /// How it ended.
    pub state: StepState,
    /// When it started.
    pub started: Option<Timestamp>,
    /// When it completed.
    pub completed: Option<Timestamp>,
    /// `completed - started`, s.
    pub wall_seconds: Option<f64>,
    /// Its per-step usage, when the provenance recorded some.
    pub usage: Option<Step>,
    /// The machine while it ran.
    pub machine: MachineWindow,
    /// The failed command's exit status, from the record's error details.
    pub exit_code: Option<i32>,
}

impl BuildStep {
    /// `RUN make (Dockerfile:12)`.
    #[must_use]
    pub fn title(&self) -> String {
        match &self.location {
            Some(l) => format!("{} ({l})", self.name),
            None => self.name.clone(),
        }
    }
}

/// Step counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Vertexes in the status stream.
    pub vertexes: usize,
    /// Of those, ran.
    pub executed: usize,
    /// From the cache.
    pub cached: usize,
    /// Failed.
    pub failed: usize,
    /// Never completed.
    pub incomplete: usize,
    /// In the definition, how they ended not recorded (a bare predicate).
    pub unrecorded: usize,
    /// The record's `numTotalSteps`.
    pub record_total: Option<i64>,
    /// The record's `numCompletedSteps`.
    pub record_completed: Option<i64>,
    /// The record's `numCachedSteps`.
    pub record_cached: Option<i64>,
}

/// One build of a bundle.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Build {
    /// The history record's ref.
    pub reference: String,
    /// The Dockerfile's base name, as step locations name it.
    pub dockerfile: String,
    /// The Dockerfile as the build named it (`FrontendAttrs.filename`).
    pub dockerfile_path: String,
    /// The target, when set.
    pub target: Option<String>,
    /// When the build was created.
    pub created: Option<Timestamp>,
    /// When it completed.
    pub completed: Option<Timestamp>,
    /// Created to completed, s.
    pub wall_seconds: Option<f64>,
    /// Why it failed.
    pub error: Option<String>,
    /// The platforms built.
    pub platforms: Vec<String>,
    /// Steps, by start time.
    pub steps: Vec<BuildStep>,
    /// Indexes into `steps` of the longest chain by the vertex inputs.
    pub critical_path: Vec<usize>,
    /// Counts.
    pub counts: Counts,
    /// Where the timeline came from (`status stream`, `solve status JSON`).
    pub timeline_from: Option<&'static str>,
    /// What the bundle held, one line each.
    pub sources: Vec<String>,
    /// Why there is no per-step usage, when there is none.
    pub notice: Option<String>,
    /// The build's machine samples (all platforms' `sysUsage`, merged).
    pub machine: Vec<SysSample>,
    /// Warnings the build reported.
    pub warnings: Vec<String>,
}

fn seconds_between(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<f64> {
    Some(b?.duration_since(a?).as_secs_f64().max(0.0))
}

/// `[linux/amd64 2/3] RUN make` → (`linux/amd64`, `RUN make`);
/// `[internal] load` → (None, `[internal] load`).
fn split_name(name: &str) -> (Option<String>, String) {
    if let Some(rest) = name.strip_prefix('[')
        && let Some((inside, after)) = rest.split_once("] ")
    {
        let first = inside.split_whitespace().next().unwrap_or_default();
        if first.contains('/') && !first.contains(':') {
            let stage: Vec<&str> = inside.split_whitespace().skip(1).collect();
            let keep = if stage.is_empty() { String::new() } else { format!("[{}] ", stage.join(" ")) };
            return (Some(first.to_owned()), format!("{keep}{after}"));
        }
    }
    (None, name.to_owned())
}

/// The machine over `[start, end]`.
#[allow(clippy::cast_precision_loss)]
pub(super) fn machine_window(sys: &[SysSample], start: Option<Timestamp>, end: Option<Timestamp>) -> MachineWindow {
    let (Some(start), Some(end)) = (start, end) else { return MachineWindow::default() };
    let before = sys.iter().rposition(|s| s.timestamp <= start).unwrap_or(0);
    let Some(after) = sys.iter().position(|s| s.timestamp >= end).or(sys.len().checked_sub(1)) else {
        return MachineWindow::default();
    };
    let (Some(a), Some(b)) = (sys.get(before), sys.get(after)) else { return MachineWindow::default() };
    if after <= before {
        return MachineWindow { from: Some(a.timestamp), to: Some(b.timestamp), ..MachineWindow::default() };
    }
    let busy = a.cpu_stat.as_ref().zip(b.cpu_stat.as_ref()).and_then(|(x, y)| {
        let used = |c: &stepmon_model::system::SysCPUStat| c.user + c.nice + c.system + c.irq + c.softirq + c.steal;
        let all = |c: &stepmon_model::system::SysCPUStat| used(c) + c.idle + c.iowait;
        let total = all(y) - all(x);
        (total > 0.0).then(|| ((used(y) - used(x)) / total).clamp(0.0, 1.0))
    });
    let seconds = b.timestamp.duration_since(a.timestamp).as_secs_f64();
    let total = |s: &SysSample| s.cpu_pressure.as_ref()?.some.as_ref()?.total;
    let stall = total(a)
        .zip(total(b))
        .filter(|_| seconds > 0.0)
        .map(|(x, y)| (y.saturating_sub(x) as f64 / 1e6 / seconds).clamp(0.0, 1.0));
    let saturated = match (busy, stall) {
        (None, None) => None,
        _ => Some(busy.is_some_and(|b| b >= SATURATED_BUSY_SHARE) || stall.is_some_and(|s| s >= SATURATED_STALL_SHARE)),
    };
    MachineWindow {
        from: Some(a.timestamp),
        to: Some(b.timestamp),
        cpu_busy_share: busy,
        cpu_stall_share: stall,
        saturated,
    }
}

/// The longest chain by inputs, weighted by wall time (cached steps weigh
/// nothing); iterative, so a deep or cyclic graph of a hostile input
/// neither overflows the stack nor loops.
fn critical_path(steps: &[BuildStep]) -> Vec<usize> {
    let index = |d: &str| steps.iter().position(|s| s.digest == d);
    let inputs: Vec<Vec<usize>> = steps.iter().map(|s| s.inputs.iter().filter_map(|d| index(d)).collect()).collect();
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; steps.len()];
    let mut best: Vec<(f64, Option<usize>)> = vec![(0.0, None); steps.len()];
    for root in 0..steps.len() {
        let mut stack = vec![root];
        while let Some(&v) = stack.last() {
            match state[v] {
                0 => {
                    state[v] = 1;
                    stack.extend(inputs[v].iter().copied().filter(|i| state[*i] == 0));
                }
                1 => {
                    let own = steps[v].wall_seconds.filter(|_| steps[v].state != StepState::Cached).unwrap_or(0.0);
                    let prev = inputs[v]
                        .iter()
                        .filter(|i| state[**i] == 2)
                        .max_by(|a, b| best[**a].0.total_cmp(&best[**b].0))
                        .copied();
                    best[v] = (own + prev.map_or(0.0, |p| best[p].0), prev);
                    state[v] = 2;
                    stack.pop();
                }
                _ => {
                    stack.pop();
                }
            }
        }
    }
    // Of equal chains, the one ending first (a step that never ran adds nothing).
    let end = (0..steps.len()).rev().max_by(|a, b| best[*a].0.total_cmp(&best[*b].0));
    let mut path = Vec::new();
    let mut at = end.filter(|e| best[*e].0 > 0.0);
    while let Some(v) = at {
        if path.contains(&v) {
            break;
        }
        path.push(v);
        at = best[v].1;
    }
    path.reverse();
    path
}

/// Without a status stream, the provenance's steps with usage are the
/// timeline (their times estimated from their samples); other steps have
/// no times to show.
fn from_provenance(provenance: &[Provenance]) -> Status {
    let mut status = Status::default();
    for step in provenance.iter().flat_map(|p| p.usage.iter()) {
        let stepmon_report::step::Origin::BuildKit { digest: Some(digest), .. } = &step.origin else { continue };
        status.vertexes.push(Vertex {
            digest: digest.clone(),
            name: step.name.clone(),
            started: step.start,
            completed: step.end,
            ..Vertex::default()
        });
    }
    status
}

fn state_of(v: &Vertex) -> StepState {
    match (&v.error, v.cached, v.completed) {
        (Some(error), _, _) => StepState::Failed { error: error.clone() },
        (None, true, _) => StepState::Cached,
        (None, false, Some(_)) => StepState::Executed,
        (None, false, None) => StepState::Incomplete,
    }
}

/// Assembles the build.
pub(super) fn assemble(
    record: &HistoryRecord,
    status: Option<(&'static str, Status)>,
    provenance: &[Provenance],
    sources: Vec<String>,
) -> Build {
    let mut machine: Vec<SysSample> = provenance.iter().flat_map(|p| p.sys_usage.iter().cloned()).collect();
    machine.sort_by_key(|s| s.timestamp);
    machine.dedup_by_key(|s| s.timestamp);
    let vertex_times = status.is_some();
    let (timeline_from, status) = match status {
        Some((from, status)) => (Some(from), status),
        None => (Some("provenance (estimated from samples)"), from_provenance(provenance)),
    };
    let mut steps: Vec<BuildStep> = status
        .vertexes
        .iter()
        .map(|v| {
            let (name_platform, name) = split_name(&v.name);
            let prov = provenance.iter().find_map(|p| {
                let step = p.steps.iter().find(|s| s.digest.as_deref() == Some(v.digest.as_str()))?;
                Some((p, step))
            });
            let usage = provenance
                .iter()
                .flat_map(|p| p.usage.iter())
                .find(|s| matches!(&s.origin, stepmon_report::step::Origin::BuildKit { digest: Some(d), .. } if *d == v.digest))
                .map(|s| if vertex_times { s.clone().with_vertex_timing(v.started, v.completed) } else { s.clone() });
            let platform = prov.and_then(|(p, s)| s.platform.clone().or_else(|| p.platform.clone())).or(name_platform);
            BuildStep {
                digest: v.digest.clone(),
                vertex_name: v.name.clone(),
                name,
                platform,
                location: prov.and_then(|(_, s)| s.location.clone()),
                command: prov.and_then(|(_, s)| s.command.clone()),
                inputs: v.inputs.clone(),
                state: state_of(v),
                started: v.started,
                completed: v.completed,
                wall_seconds: seconds_between(v.started, v.completed),
                usage,
                machine: machine_window(&machine, v.started, v.completed),
                exit_code: None,
            }
        })
        .collect();
    steps.sort_by_key(|s| s.started.unwrap_or(Timestamp::MAX));
    if let Some(failure) = record.error.as_ref().map(super::record::RpcStatus::failure)
        && let Some(step) = steps.iter_mut().find(|s| failure.vertex.as_deref() == Some(s.digest.as_str()))
    {
        step.location = step.location.take().or(failure.location);
        step.exit_code = failure.exit_code;
    }
    let mut counts = Counts {
        vertexes: steps.len(),
        record_total: record.total_steps,
        record_completed: record.completed_steps,
        record_cached: record.cached_steps,
        ..Counts::default()
    };
    for s in &steps {
        let n = match s.state {
            StepState::Executed => &mut counts.executed,
            StepState::Cached => &mut counts.cached,
            StepState::Failed { .. } => &mut counts.failed,
            StepState::Incomplete => &mut counts.incomplete,
            StepState::Unrecorded => &mut counts.unrecorded,
        };
        *n = n.saturating_add(1);
    }
    let mut platforms: Vec<String> = record
        .frontend_attrs
        .get("platform")
        .map(|p| p.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect())
        .unwrap_or_default();
    for p in provenance.iter().filter_map(|p| p.platform.clone()).chain(steps.iter().filter_map(|s| s.platform.clone()))
    {
        if !platforms.contains(&p) {
            platforms.push(p);
        }
    }
    let critical_path = critical_path(&steps);
    let notice = notice(provenance, &steps, !machine.is_empty());
    let warnings = status.warnings.iter().map(|(_, w)| w.clone()).collect();
    Build {
        reference: record.reference.clone(),
        dockerfile: record.dockerfile(),
        dockerfile_path: record.frontend_attrs.get("filename").cloned().unwrap_or_else(|| "Dockerfile".to_owned()),
        target: record.frontend_attrs.get("target").cloned(),
        created: record.created_at,
        completed: record.completed_at,
        wall_seconds: seconds_between(record.created_at, record.completed_at),
        error: record.error.as_ref().map(|e| e.message.clone()).filter(|m| !m.is_empty()),
        platforms,
        steps,
        critical_path,
        counts,
        timeline_from,
        sources,
        notice,
        machine,
        warnings,
    }
}

/// Why no step has usage, as far as the bundle shows (never a guess
/// presented as the cause).
fn notice(provenance: &[Provenance], steps: &[BuildStep], machine: bool) -> Option<String> {
    if steps.iter().any(|s| s.usage.is_some()) {
        return None;
    }
    if provenance.iter().any(|p| !p.usage.is_empty()) {
        return Some(
            "the provenance has per-step usage, but none of its steps matches a vertex of the status stream by digest"
                .to_owned(),
        );
    }
    Some(if provenance.is_empty() {
        "no per-step usage: the bundle has no provenance attestation (BuildKit records usage only in provenance, \
         with --attest type=provenance,mode=max)"
            .to_owned()
    } else if !provenance.iter().any(|p| p.has_build_config) {
        "no per-step usage: the provenance is mode=min, which records no steps".to_owned()
    } else if machine {
        "no per-step usage: the builder recorded machine samples (sysUsage) but no step's resourceUsage — \
         Docker Engine's built-in BuildKit records none, nor does BuildKit on a host without cgroup v2 or with a \
         worker that gives steps no cgroup of their own; the record does not say which"
            .to_owned()
    } else {
        "no per-step usage: the provenance has neither resourceUsage nor sysUsage (a BuildKit before v0.13, or \
         capture-usage not recorded)"
            .to_owned()
    })
}
