//! Two jobs' totals (wall, CPU, peak memory) compared with the noise model
//! of a step's fields.

use serde::Serialize;

use stepmon_model::verdict::Thresholds;

use super::fields::float;
use super::noise::busy_share;
use super::step::verdict_of;
use super::{DiffVerdict, FieldDiff, FieldKind, FieldSpec, judge};

/// What a job's totals are for a diff.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct JobTotals {
    /// First start to last end, s.
    pub wall_seconds: Option<f64>,
    /// CPU time of all its steps, s.
    pub cpu_seconds: Option<f64>,
    /// The most memory its running steps held at once, bytes.
    pub memory_peak_bytes: Option<f64>,
    /// The largest busy share of the machine over its steps (it widens the
    /// time tolerances, as for a step).
    pub busy_share: f64,
}

impl JobTotals {
    /// The totals of the job of `entries` (their steps as compared: the
    /// caller leaves out what it does not compare, e.g. interrupted steps).
    #[must_use]
    pub fn of(entries: &[crate::job::Entry]) -> JobTotals {
        let verdict = crate::job::JobVerdict::of(entries);
        let thresholds = Thresholds::default();
        let origin = entries.iter().filter_map(|e| e.step.time_origin()).min();
        let end = entries
            .iter()
            .filter_map(|e| {
                let wall = jiff::SignedDuration::try_from_secs_f64(e.step.wall_seconds?).ok()?;
                e.step.time_origin()?.checked_add(wall).ok()
            })
            .max();
        let cpu: Vec<f64> = entries.iter().filter_map(|e| e.step.summary.cpu.usage_seconds).collect();
        JobTotals {
            wall_seconds: origin.zip(end).map(|(o, e)| e.duration_since(o).as_secs_f64()),
            cpu_seconds: (!cpu.is_empty()).then(|| cpu.iter().sum()),
            memory_peak_bytes: float(verdict.memory_peak_bytes),
            busy_share: entries
                .iter()
                .filter_map(|e| busy_share(&crate::verdict::machine_of(&e.step, &thresholds)))
                .fold(0.0, f64::max),
        }
    }
}

/// Two jobs' totals compared with the noise model of a step's fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TotalsDiff {
    /// Before.
    pub before: JobTotals,
    /// After.
    pub after: JobTotals,
    /// Wall, CPU and peak memory.
    pub fields: Vec<FieldDiff>,
    /// Heavier, lighter, ... as for a step.
    pub verdict: DiffVerdict,
    /// In words.
    pub reason: String,
}

/// A job total a diff compares: (field, label, kind, value).
type Total = (&'static str, &'static str, FieldKind, fn(&JobTotals) -> Option<f64>);

/// The job totals a diff compares.
const TOTALS: [Total; 3] = [
    ("job.wallSeconds", "job wall time", FieldKind::Wall, |t| t.wall_seconds),
    ("job.cpuSeconds", "job CPU time", FieldKind::CpuTime, |t| t.cpu_seconds),
    ("job.memoryPeakBytes", "job memory peak", FieldKind::Memory, |t| t.memory_peak_bytes),
];

impl TotalsDiff {
    /// Compares the totals `before` with `after`.
    #[must_use]
    pub fn between(before: JobTotals, after: JobTotals) -> TotalsDiff {
        let busy = before.busy_share.max(after.busy_share);
        let fields: Vec<FieldDiff> = TOTALS
            .iter()
            .map(|(field, label, kind, get)| {
                let spec = FieldSpec { field, label, kind: *kind, get: |_| None };
                let finite = |t: &JobTotals| get(t).filter(|v| v.is_finite());
                judge(&spec, (finite(&before), finite(&after)), false, busy, (0.0, 0.0))
            })
            .collect();
        let (verdict, _, reason) = verdict_of(&fields, busy);
        TotalsDiff { before, after, fields, verdict, reason }
    }

    /// Whether the job got heavier beyond the noise.
    #[must_use]
    pub fn heavier(&self) -> bool {
        matches!(self.verdict, DiffVerdict::Heavier | DiffVerdict::Mixed)
    }
}
