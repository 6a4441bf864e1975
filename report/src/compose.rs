//! The summary of a `stepmon run` from its sources: each field group from the
//! rung the run recorded for it ([`crate::source`]) — the step's cgroup
//! samples, the process tree's rusage, or the enclosing cgroup's samples.

use stepmon_model::sample::UsageSummary;

use stepmon_model::document::RunDocument;

/// Fills in what a measured step's document leaves to the report: its
/// summary (over the wall time the runner recorded in
/// `stepmon.summary.wallSeconds`), its verdicts and its advice
/// ([`crate::advice`]). `stepmon run` writes
/// documents completed so; a builder that runs steps through
/// `stepmon-runner` calls this when it wants them too.
///
/// ```
/// use stepmon_model::document::RunDocument;
/// let json = r#"{"resourceUsage": {"samples": [
///     {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
///     {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
///   "stepmon": {"command": ["make"], "exitCode": 0}}"#;
/// let mut document: RunDocument = serde_json::from_str(json)?;
/// // What the runner records: the wall time, beside the samples.
/// document.stepmon.as_mut().unwrap().summary.wall_seconds = Some(2.0);
/// stepmon_report::compose::complete(&mut document);
/// let run = document.stepmon.as_ref().unwrap();
/// assert_eq!(run.summary.cpu.average_cores, Some(0.75));
/// assert!(run.verdicts.is_some());
/// let parallelism = run.advice.as_ref().unwrap().parallelism.as_ref().unwrap();
/// assert_eq!(parallelism.reason, "no parallelism advice: no per-process records");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn complete(document: &mut RunDocument) {
    let Some(wall) = document.stepmon.as_ref().map(|info| info.summary.wall_seconds) else { return };
    let summary = summary(document, wall);
    let Some(info) = document.stepmon.as_mut() else { return };
    info.summary = summary;
    let step = crate::Step::from_run(document);
    let (verdicts, advice) = (step.verdicts(), step.advice());
    if let Some(info) = document.stepmon.as_mut() {
        info.verdicts = Some(verdicts);
        info.advice = Some(advice);
    }
}

/// The summary of `document`'s step over `wall_seconds` (`None`: unknown,
/// and so are the shares of it); see [`stepmon_model::summary::summary`].
#[must_use]
pub fn summary(document: &RunDocument, wall_seconds: Option<f64>) -> UsageSummary {
    stepmon_model::summary::summary(document, wall_seconds)
}
