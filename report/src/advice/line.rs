//! The parallelism advice in one line, from its typed fields:
//! "up to 6 python3 ran at once (6 runs), p95 129 MiB each; 381 MiB (the
//! step's memory.max) less 10% headroom fits 2 → -j2 (memory-bound: 3 OOM
//! kills)".

use stepmon_model::advice::{CoresSource, LimitedBy, MemorySource, NoAdvice, ParallelismAdvice};
use stepmon_model::source::Bound;

use crate::units::{bytes, percent};

/// Why there is no advice, in words.
fn no_advice(why: NoAdvice) -> String {
    let what = match why {
        NoAdvice::NoProcessRecords => "no per-process records".to_owned(),
        NoAdvice::TooFewInstances => {
            format!("no command ran {} times or more", ParallelismAdvice::MIN_INSTANCES)
        }
        NoAdvice::NoPeaks => "the repeated commands have no peak memory recorded".to_owned(),
        NoAdvice::NoLifetimes => "the document records no process lifetimes (an older version)".to_owned(),
        NoAdvice::MemoryUnknown => "neither a memory limit nor the machine's memory is known".to_owned(),
    };
    format!("no parallelism advice: {what}")
}

fn memory_source(source: Option<MemorySource>) -> &'static str {
    match source {
        Some(MemorySource::StepLimit) => "the step's memory limit",
        Some(MemorySource::EnclosingLimit) => "the enclosing cgroup's memory limit",
        Some(MemorySource::MachineLessOthers) => "the machine's memory less others' use",
        None => "unknown",
    }
}

fn cores(advice: &ParallelismAdvice) -> String {
    let Some(c) = advice.cores else { return "cores unknown".to_owned() };
    let n = if c.fract() == 0.0 { format!("{c:.0}") } else { format!("{c:.1}") };
    let whose = match advice.cores_source {
        Some(CoresSource::StepLimit) => " (its cpu.max)",
        Some(CoresSource::EnclosingLimit) => " (the enclosing cpu.max)",
        _ => "",
    };
    format!("{n} cores{whose}")
}

/// The line.
pub(super) fn render(advice: &ParallelismAdvice) -> String {
    if let Some(why) = advice.no_advice {
        return no_advice(why);
    }
    let (Some(command), Some(peaks), Some(jobs)) = (&advice.command, advice.peak_bytes, advice.suggested_jobs) else {
        return no_advice(NoAdvice::NoProcessRecords);
    };
    let at_least = if peaks.bound == Bound::LowerBound { "at least " } else { "" };
    let largest = match &advice.largest_input {
        Some(input) => format!(", largest {} ({input})", bytes(peaks.max)),
        None => format!(", largest {}", bytes(peaks.max)),
    };
    let workers = format!(
        "up to {} {command} ran at once ({} runs), p95 {at_least}{} each{largest}",
        advice.observed_concurrency.unwrap_or(0),
        advice.instances.unwrap_or(0),
        bytes(peaks.p95)
    );
    let fits = advice.fits_in_memory.unwrap_or(0);
    let memory = format!(
        "{} ({}) less {} headroom fits {fits}",
        bytes(advice.memory_available_bytes.unwrap_or(0)),
        memory_source(advice.memory_source),
        percent(advice.headroom)
    );
    let stall = advice.cpu_stall_share.map_or_else(String::new, |s| format!("stall {}, ", percent(s)));
    let wanted = advice
        .workers_cpu_share
        .map_or_else(String::new, |s| format!("{command} on CPU {} of the time not queued for one, ", percent(s)));
    let verdict = match advice.limited_by {
        Some(LimitedBy::Cpu) => {
            format!("memory is not the limit (fits {fits}); CPU is ({wanted}{stall}{}) → -j{jobs}", cores(advice))
        }
        Some(LimitedBy::Memory) => {
            let why = if advice.oom_kills > 0 {
                format!("{} OOM kill{}", advice.oom_kills, if advice.oom_kills == 1 { "" } else { "s" })
            } else {
                format!("{} ran at once", advice.observed_concurrency.unwrap_or(0))
            };
            let none = if fits == 0 { ", not even one fits with the headroom" } else { "" };
            format!("{memory} → -j{jobs} (memory-bound: {why}{none})")
        }
        _ => format!("{memory} → up to -j{jobs} (neither memory nor CPU held it back: {wanted}{})", cores(advice)),
    };
    let bound = if peaks.bound == Bound::LowerBound { " [sampled peaks are lower bounds: fewer may fit]" } else { "" };
    format!("parallelism: {workers}; {verdict}{bound}")
}
