//! Per-command aggregates of the two runs compared (their `processes`
//! documents): each command's CPU and largest peak RSS judged by the same
//! noise model as the step's CPU time and memory fields.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use super::{FieldDiff, FieldKind, FieldSpec, judge};
use crate::step::Step;
use stepmon_model::processes::CommandAggregate;

/// One command of either run compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CommandDiff {
    /// The command name.
    pub command: String,
    /// Its processes before and after (absent: not run on that side).
    pub count: (Option<u64>, Option<u64>),
    /// Its total CPU, s.
    pub cpu: FieldDiff,
    /// Its largest peak RSS, bytes.
    pub peak_rss: FieldDiff,
}

const CPU: FieldSpec = FieldSpec { field: "cpuSeconds", label: "CPU", kind: FieldKind::CpuTime, get: |_| None };
const PEAK: FieldSpec =
    FieldSpec { field: "maxPeakRssBytes", label: "largest peak RSS", kind: FieldKind::Memory, get: |_| None };

fn commands(step: &Step) -> &[CommandAggregate] {
    step.run.as_ref().and_then(|r| r.processes.as_ref()).map_or(&[], |p| p.commands.as_slice())
}

/// Every command of either run, most CPU after first; `busy` widens the CPU
/// tolerance as for the step's fields.
pub(super) fn between(before: &Step, after: &Step, busy: f64) -> Vec<CommandDiff> {
    let (b, a) = (commands(before), commands(after));
    let names: BTreeSet<&str> = b.iter().chain(a).map(|c| c.command.as_str()).collect();
    let find = |list: &'_ [CommandAggregate], name: &str| list.iter().find(|c| c.command == name).cloned();
    let mut out: Vec<CommandDiff> = names
        .into_iter()
        .map(|name| {
            let (cb, ca) = (find(b, name), find(a, name));
            #[allow(clippy::cast_precision_loss)] // bytes far below 2^53
            let peak = |c: &Option<CommandAggregate>| c.as_ref().and_then(|c| c.max_peak_rss_bytes).map(|v| v as f64);
            let cpu = |c: &Option<CommandAggregate>| c.as_ref().map(|c| c.cpu_seconds);
            CommandDiff {
                command: name.to_owned(),
                count: (cb.as_ref().map(|c| c.count), ca.as_ref().map(|c| c.count)),
                cpu: judge(&CPU, (cpu(&cb), cpu(&ca)), false, busy, (0.0, 0.0)),
                peak_rss: judge(&PEAK, (peak(&cb), peak(&ca)), false, busy, (0.0, 0.0)),
            }
        })
        .collect();
    out.sort_by(|x, y| {
        y.cpu.after.unwrap_or(0.0).total_cmp(&x.cpu.after.unwrap_or(0.0)).then(x.command.cmp(&y.command))
    });
    out
}

/// A line per command whose CPU or peak changed beyond the noise.
pub(super) fn lines(out: &mut String, diffs: &[CommandDiff]) {
    for d in diffs.iter().filter(|d| d.cpu.significant || d.peak_rss.significant) {
        let mut parts = Vec::new();
        for f in [&d.cpu, &d.peak_rss].into_iter().filter(|f| f.significant) {
            let show = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| f.kind.show(v));
            parts.push(format!("{} {} → {}", f.label, show(f.before), show(f.after)));
        }
        let _ = writeln!(out, "* command  {}: {}", d.command, parts.join(", "));
    }
}
